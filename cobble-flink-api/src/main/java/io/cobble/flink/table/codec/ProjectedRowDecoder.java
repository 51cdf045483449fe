package io.cobble.flink.table.codec;

import io.cobble.util.ColumnsSink;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;

/**
 * Builds a lookup's produced row from the values of {@link RowProjection#cobbleColumns()} as a
 * point read hands them over in place ({@code Reader.readColumns}): each value is decoded straight
 * into the row's field, so a hit makes no array of copied values first. Reused from read to read by
 * one thread: {@link #start} before the read, {@link #finish} after it found the row.
 */
public final class ProjectedRowDecoder implements ColumnsSink {

  private final RowProjection projection;
  private GenericRowData row;

  ProjectedRowDecoder(RowProjection projection) {
    this.projection = projection;
  }

  /** Forgets the previous read's row. */
  public void start() {
    row = null;
  }

  @Override
  public void accept(int index, byte[] buf, int off, int len) {
    if (row == null) {
      row = new GenericRowData(projection.arity());
    }
    projection.decodeColumn(row, index, buf, off, len);
  }

  /**
   * The row of the read that found {@code probe}'s key, with its key fields as {@link
   * RowProjection#fillKey} sets them.
   *
   * @param key {@code probe}'s encoded key
   */
  public RowData finish(RowData probe, int[] probePositions, byte[] key) {
    GenericRowData found = row == null ? new GenericRowData(projection.arity()) : row;
    row = null;
    projection.fillKey(found, probe, probePositions, key);
    return found;
  }
}
