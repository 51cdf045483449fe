package io.cobble.util;

/**
 * Receives the values of a projected point read one column at a time, in place (the bytes stay
 * where they are stored and are valid only during the call), so a caller can decode a row into its
 * own objects without an array of copied values in between.
 */
@FunctionalInterface
public interface ColumnsSink {
  /**
   * Column {@code index} of the read's projection (its position in the projection, not the
   * column's) has the value at {@code buf[off, off + len)}; not called for a column without a live
   * value.
   */
  void accept(int index, byte[] buf, int off, int len);

  /**
   * Called before the values when what the read hands over depends on the time of the read (some of
   * them expire), so whoever keeps the result must not keep this one.
   */
  default void expiring() {}
}
