package io.cobble.merge;

import io.cobble.util.Bytes;

/** Adds 8-byte big-endian unsigned counters, wrapping on overflow. */
public final class U64AddOperator implements MergeOperator {
  public static final String NAME = "u64_add";

  public static byte[] encode(long v) {
    byte[] b = new byte[8];
    Bytes.putLong(b, 0, v);
    return b;
  }

  public static long decode(byte[] b) {
    return Bytes.getLong(b, 0);
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void validateOperand(byte[] operand) {
    if (operand.length != 8) {
      throw new IllegalArgumentException(
          "u64_add operand must be 8 bytes (big-endian), got " + operand.length);
    }
  }

  @Override
  public byte[] merge(byte[] older, byte[] newer) {
    return encode(decode(older) + decode(newer));
  }
}
