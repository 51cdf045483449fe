package io.cobble.row;

import static io.cobble.row.RowState.DELETE;
import static io.cobble.row.RowState.MERGE;
import static io.cobble.row.RowState.PUT;
import static io.cobble.row.RowState.varint;
import static io.cobble.row.RowState.varintEnd;

/**
 * Recognises an encoded row a table can store as it is: its columns are PUT, MERGE or DELETE values
 * held inline, each at most a given length, listed in layout order and all still in the layout, at
 * least one of them. Such a row is what {@link RowState#encode} would write after decoding it, so a
 * flush or compaction copies it into the table without decoding it (a flushed batch of list
 * operands is copied once). The same pass finds what the table records about the row: the {@link
 * RowState#maxExpiry} a decode would report and the oldest write time of its MERGE columns. Reads
 * without allocating; one instance per writer.
 */
public final class PlainRow {
  private long expiry;
  private long minMergeWriteTime;

  /**
   * Whether the row in {@code buf[off, off + len)} is plain with values of at most {@code
   * maxValueLength} bytes ({@code 0}: any length); when it is, {@link #expiry} and {@link
   * #minMergeWriteTime} describe it.
   */
  public boolean read(ColumnLayout layout, byte[] buf, int off, int len, long maxValueLength) {
    return read(layout, buf, off, len, maxValueLength, false, 0);
  }

  /**
   * As {@link #read} for a row a compaction writes at the bottom of the tree, where deletes and
   * values expired at or before {@code dropBefore} are dropped and merges become puts: false also
   * when a column is a DELETE, a MERGE or a PUT with such an expiry, since the bottom does not
   * store that row as it is.
   */
  public boolean readBottom(
      ColumnLayout layout, byte[] buf, int off, int len, long maxValueLength, long dropBefore) {
    return read(layout, buf, off, len, maxValueLength, true, dropBefore);
  }

  /** The row's {@link RowState#maxExpiry}: 0 when a column never expires, -1 without values. */
  public long expiry() {
    return expiry;
  }

  /** The oldest write time of the row's MERGE columns, {@link Long#MAX_VALUE} without one. */
  public long minMergeWriteTime() {
    return minMergeWriteTime;
  }

  private boolean read(
      ColumnLayout layout,
      byte[] buf,
      int off,
      int len,
      long maxValueLength,
      boolean bottom,
      long dropBefore) {
    int end = off + len;
    int pos = varintEnd(buf, off, end);
    if (pos > end) {
      return false;
    }
    long n = varint(buf, off);
    if (n < 1 || n > layout.size()) {
      return false;
    }
    long max = -1;
    long minWriteTime = Long.MAX_VALUE;
    int lastPosition = -1;
    for (long k = 0; k < n; k++) {
      int idEnd = varintEnd(buf, pos, end);
      if (idEnd >= end) {
        return false;
      }
      long id = varint(buf, pos);
      int position = id >= 0 && id <= Integer.MAX_VALUE ? layout.position((int) id) : -1;
      if (position <= lastPosition) {
        return false;
      }
      lastPosition = position;
      int tag = buf[idEnd];
      pos = idEnd + 1;
      if (tag == PUT || (tag == MERGE && !bottom)) {
        int expiryEnd = varintEnd(buf, pos, end);
        int writeTimeEnd = tag == MERGE ? varintEnd(buf, expiryEnd, end) : expiryEnd;
        int lengthEnd = varintEnd(buf, writeTimeEnd, end);
        if (lengthEnd > end) {
          return false;
        }
        long columnExpiry = varint(buf, pos);
        long valueLength = varint(buf, writeTimeEnd);
        if (bottom && columnExpiry != 0 && columnExpiry <= dropBefore) {
          return false;
        }
        if (valueLength < 0
            || valueLength > end - lengthEnd
            || (maxValueLength > 0 && valueLength > maxValueLength)) {
          return false;
        }
        if (tag == MERGE) {
          minWriteTime = Math.min(minWriteTime, varint(buf, expiryEnd));
        }
        if (columnExpiry == 0) {
          max = 0;
        } else if (max != 0) {
          max = Math.max(max, columnExpiry);
        }
        pos = lengthEnd + (int) valueLength;
      } else if (tag != DELETE || bottom) {
        return false;
      }
    }
    if (pos != end) {
      return false;
    }
    expiry = max;
    minMergeWriteTime = minWriteTime;
    return true;
  }
}
