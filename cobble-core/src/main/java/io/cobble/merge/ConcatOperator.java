package io.cobble.merge;

/** Appends the bytes of each operand to the value. */
public final class ConcatOperator implements MergeOperator {
  public static final String NAME = "concat";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public boolean concatenates() {
    return true;
  }

  @Override
  public byte[] merge(byte[] older, byte[] newer) {
    byte[] out = new byte[older.length + newer.length];
    System.arraycopy(older, 0, out, 0, older.length);
    System.arraycopy(newer, 0, out, older.length, newer.length);
    return out;
  }
}
