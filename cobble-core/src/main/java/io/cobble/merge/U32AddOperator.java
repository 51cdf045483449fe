package io.cobble.merge;

import io.cobble.util.Bytes;

/** Adds 4-byte big-endian unsigned counters, wrapping on overflow. */
public final class U32AddOperator implements MergeOperator {
  public static final String NAME = "u32_add";

  public static byte[] encode(int v) {
    byte[] b = new byte[4];
    Bytes.putInt(b, 0, v);
    return b;
  }

  public static int decode(byte[] b) {
    return Bytes.getInt(b, 0);
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void validateOperand(byte[] operand) {
    if (operand.length != 4) {
      throw new IllegalArgumentException(
          "u32_add operand must be 4 bytes (big-endian), got " + operand.length);
    }
  }

  @Override
  public byte[] merge(byte[] older, byte[] newer) {
    return encode(decode(older) + decode(newer));
  }
}
