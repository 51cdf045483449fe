package io.cobble.row;

import io.cobble.merge.MergeOperator;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.util.Arrays;

/**
 * Folds the encoded rows of one key, newest first, for a layout whose only column is a byte-wise
 * concatenation (a list without a cap) and has no default: the result is what {@link
 * RowState#mergeOlder} and {@link RowState#encode} would produce, built by copying each row's value
 * bytes once instead of decoding every row into arrays and concatenating them pairwise. Rows it
 * cannot fold this way (value-log pointers, dropped columns, malformed bytes) are refused, and the
 * caller continues from {@link #writeTo} with the general fold.
 */
public final class ConcatFold {
  private int columnId;
  private byte kind;
  private long expiry;
  private long writeTime;
  private boolean done;
  // Value bytes of the rows folded so far, newest first; segmentEnds[k] ends the k-th.
  private byte[] segments = new byte[1024];
  private int segmentsLength;
  private int[] segmentEnds = new int[8];
  private int segmentCount;
  // The row being parsed.
  private byte rowKind;
  private long rowExpiry;
  private long rowWriteTime;
  private int valueOffset;
  private int valueLength;
  private final ByteReader reader = new ByteReader();

  /** Whether rows of {@code layout} can be folded by {@link ConcatFold}. */
  public static boolean applies(ColumnLayout layout) {
    if (layout.size() != 1 || layout.storedDefault(0) != null) {
      return false;
    }
    MergeOperator op = layout.operator(0);
    return op != null && op.concatenates();
  }

  /**
   * Starts a fold with the newest row of a key; false (nothing started) unless it is a MERGE of the
   * column held inline.
   */
  public boolean start(ColumnLayout layout, byte[] buf, int off, int len) {
    if (!parse(layout, buf, off, len) || rowKind != RowState.MERGE) {
      return false;
    }
    columnId = layout.id(0);
    kind = RowState.MERGE;
    expiry = rowExpiry;
    writeTime = rowWriteTime;
    done = false;
    segmentsLength = 0;
    segmentCount = 0;
    append(buf);
    return true;
  }

  /**
   * Folds the next older row of the key under the result; false (result unchanged) when the row
   * cannot be folded byte-wise. Once the result is a PUT, older rows no longer matter.
   */
  public boolean addOlder(ColumnLayout layout, byte[] buf, int off, int len) {
    if (done) {
      return true;
    }
    if (!parse(layout, buf, off, len)) {
      return false;
    }
    switch (rowKind) {
      case RowState.ABSENT:
        return true;
      case RowState.DELETE:
        break;
      case RowState.PUT:
        if (RowState.alive(rowExpiry, writeTime)) {
          append(buf);
        }
        break;
      default:
        if (RowState.alive(rowExpiry, writeTime)) {
          append(buf);
          writeTime = rowWriteTime;
          return true;
        }
        break;
    }
    // As mergeOlder: over a delete, a put or an expired value the merge becomes a put.
    kind = RowState.PUT;
    writeTime = 0;
    done = true;
    return true;
  }

  /** Whether the result no longer depends on older rows. */
  public boolean isFinal() {
    return done;
  }

  /** Appends the encoded result row to {@code w}. */
  public void writeTo(ByteWriter w) {
    w.writeVarInt(1);
    w.writeVarInt(columnId);
    w.writeByte(kind);
    w.writeVarLong(expiry);
    if (kind == RowState.MERGE) {
      w.writeVarLong(writeTime);
    }
    w.writeVarInt(segmentsLength);
    // Oldest value first: concatenation appends newer operands to older ones.
    for (int k = segmentCount - 1; k >= 0; k--) {
      int start = k == 0 ? 0 : segmentEnds[k - 1];
      w.writeBytes(segments, start, segmentEnds[k] - start);
    }
  }

  private void append(byte[] buf) {
    int need = segmentsLength + valueLength;
    if (need > segments.length) {
      segments = Arrays.copyOf(segments, Math.max(need, segments.length * 2));
    }
    System.arraycopy(buf, valueOffset, segments, segmentsLength, valueLength);
    segmentsLength = need;
    if (segmentCount == segmentEnds.length) {
      segmentEnds = Arrays.copyOf(segmentEnds, segmentCount * 2);
    }
    segmentEnds[segmentCount++] = need;
  }

  /**
   * Reads a row of at most one column, the layout's, held inline; false for anything else. Sets the
   * row fields ({@link RowState#ABSENT} for a row of no column).
   */
  private boolean parse(ColumnLayout layout, byte[] buf, int off, int len) {
    ByteReader r = reader.reset(buf, off, len);
    try {
      int n = r.readVarInt();
      if (n == 0) {
        rowKind = RowState.ABSENT;
        return !r.hasRemaining();
      }
      if (n != 1) {
        return false;
      }
      int id = r.readVarInt();
      if (id < 0 || layout.position(id) != 0) {
        return false;
      }
      int tag = r.readByte();
      if (tag == RowState.DELETE) {
        rowKind = RowState.DELETE;
        return !r.hasRemaining();
      }
      if (tag != RowState.PUT && tag != RowState.MERGE) {
        return false;
      }
      rowKind = (byte) tag;
      rowExpiry = r.readVarLong();
      rowWriteTime = tag == RowState.MERGE ? r.readVarLong() : 0;
      int length = r.readVarInt();
      valueOffset = r.position();
      valueLength = length;
      return length >= 0 && length == r.limit() - valueOffset;
    } catch (IllegalStateException e) {
      return false;
    }
  }
}
