package io.cobble;

/** A row returned by a scan: its key and the (projected) column values, null where absent. */
public final class Row {
  private final byte[] key;
  private final byte[][] columns;

  public Row(byte[] key, byte[][] columns) {
    this.key = key;
    this.columns = columns;
  }

  public byte[] key() {
    return key;
  }

  public byte[][] columns() {
    return columns;
  }

  public byte[] column(int i) {
    return columns[i];
  }
}
