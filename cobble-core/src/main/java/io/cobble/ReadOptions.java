package io.cobble;

/** Per-read settings: an optional column projection (positions in the family's schema). */
public final class ReadOptions {
  public static final ReadOptions DEFAULT = new ReadOptions(null);

  private final int[] columns;

  private ReadOptions(int[] columns) {
    this.columns = columns;
  }

  /** Reads only these columns, in this order. */
  public static ReadOptions columns(int... columns) {
    if (columns == null || columns.length == 0) {
      throw new IllegalArgumentException("a projection needs at least one column");
    }
    return new ReadOptions(columns.clone());
  }

  /** The projection, or null for all columns. */
  public int[] projection() {
    return columns;
  }
}
