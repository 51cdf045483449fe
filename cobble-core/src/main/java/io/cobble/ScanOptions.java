package io.cobble;

/**
 * Scan settings: column projection, a maximum number of rows, and a key to resume after (the last
 * key a previous scan returned), so long scans can be split and continued.
 */
public final class ScanOptions {
  public static final ScanOptions DEFAULT = new ScanOptions(null, Long.MAX_VALUE, null);

  private final int[] columns;
  private final long maxRows;
  private final byte[] startAfter;

  private ScanOptions(int[] columns, long maxRows, byte[] startAfter) {
    this.columns = columns;
    this.maxRows = maxRows;
    this.startAfter = startAfter;
  }

  public static ScanOptions defaults() {
    return DEFAULT;
  }

  public ScanOptions columns(int... columns) {
    if (columns == null || columns.length == 0) {
      throw new IllegalArgumentException("a projection needs at least one column");
    }
    return new ScanOptions(columns.clone(), maxRows, startAfter);
  }

  public ScanOptions maxRows(long maxRows) {
    if (maxRows <= 0) {
      throw new IllegalArgumentException("maxRows must be positive, got " + maxRows);
    }
    return new ScanOptions(columns, maxRows, startAfter);
  }

  /** Resumes strictly after {@code key}. */
  public ScanOptions startAfter(byte[] key) {
    return new ScanOptions(columns, maxRows, key == null ? null : key.clone());
  }

  public int[] projection() {
    return columns;
  }

  public long maxRows() {
    return maxRows;
  }

  public byte[] resumeAfter() {
    return startAfter;
  }
}
