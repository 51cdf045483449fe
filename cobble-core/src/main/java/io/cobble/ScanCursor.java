package io.cobble;

import io.cobble.iterator.RowMergingIterator;
import io.cobble.read.ScanBounds;
import io.cobble.read.ScanSources;
import io.cobble.row.ColumnLayout;
import io.cobble.row.RowState;
import io.cobble.row.ValueLoader;
import io.cobble.util.Bytes;
import io.cobble.version.Version;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * Iterates the rows of a scan in key order over a pinned {@link Version}, as they were when the
 * cursor was created (see {@link Db#scan}): each memtable's iterator reads that memtable as of its
 * creation, and the version keeps the files it lists alive until {@link #close()}. Rows whose
 * projected columns are all absent, or expired at the cursor's creation, are skipped. {@link
 * #lastKey()} is the resume point for a follow-up scan ({@link ScanOptions#startAfter}). Not
 * thread-safe; close it when done.
 *
 * <p>A cursor is read either as an iterator of {@link Row}s or in place: {@link #advance()} moves
 * to the next row and leaves its key and values where they lie ({@link #keyArray()}, {@link
 * #valueArray(int)}), so a reader that decodes them at once allocates nothing per row.
 */
public final class ScanCursor implements Iterator<Row>, AutoCloseable {
  // The positions of every column of families of up to eight columns, shared: never written.
  private static final int[][] ALL_POSITIONS = new int[9][];

  static {
    for (int n = 0; n < ALL_POSITIONS.length; n++) {
      ALL_POSITIONS[n] = identity(n);
    }
  }

  private final ValueLoader loader;
  private final ColumnLayout layout;
  // Expiry is judged as of the cursor's creation, so a row alive then stays in its view.
  private final long now;
  private final Version version;
  private final ScanSources sources;
  private final RowMergingIterator merged;
  private final int[] projection;
  private final byte[] resumeAfter;
  private final long maxRows;
  private long returned;
  private Row next;
  private byte[] lastKey;
  private boolean closed;
  // In-place reading: whether advance() stands on a row, and where its projected values lie: spans
  // into the merged row's encoding (offset << 32 | length), or, when the row had to be decoded
  // (merges, expiry, the value log, absent columns), the decoded values.
  private boolean atRow;
  private int[] positions;
  private long[] spans;
  private byte[][] decoded;

  /**
   * A cursor over the rows of {@code bucket} with keys in {@code [start, end)}, or, when {@code
   * prefix} is set, over those whose keys start with {@code start} ({@code end} is then unused).
   */
  ScanCursor(
      Version version,
      ValueLoader loader,
      Clock clock,
      ColumnLayout layout,
      int bucket,
      byte[] start,
      byte[] end,
      boolean prefix,
      int[] projection,
      ScanOptions options) {
    this.loader = loader;
    this.layout = layout;
    this.now = clock.nowMillis();
    this.version = version;
    this.projection = projection;
    this.maxRows = options.maxRows();
    this.resumeAfter = options.resumeAfter();
    byte[] from = resumeAfter != null ? resumeAfter : start != null ? start : Bytes.EMPTY;
    if (start != null && Bytes.compare(from, start) < 0) {
      from = start;
    }
    this.sources = ScanSources.acquire();
    try {
      // The bounds live in the sources' buffers, which this cursor holds until it closes.
      ScanBounds bounds = sources.bounds();
      byte[] endKey =
          prefix ? bounds.hiAfterPrefix(bucket, start, start.length) : bounds.hi(bucket, end);
      byte[] seekKey = bounds.lo(bucket, from, from.length);
      // Pass-through keeps a row one source decides encoded, so advance() reads its values where
      // they lie; row() decodes it for hasNext(), the same row either way.
      merged =
          sources
              .open(version, layout, loader, seekKey, endKey)
              .upperBound(endKey)
              .passThrough(true);
      merged.seek(seekKey);
    } catch (RuntimeException e) {
      sources.release();
      throw e;
    }
  }

  @Override
  public boolean hasNext() {
    if (next != null) {
      return true;
    }
    if (positions != null) {
      throw new IllegalStateException("this cursor is read in place, with advance()");
    }
    if (closed || returned >= maxRows) {
      return false;
    }
    while (merged.valid()) {
      byte[] key = merged.keyArray();
      int from = merged.keyOffset() + 2;
      int keyLength = merged.keyLength() - 2;
      if (resumeAfter != null
          && Bytes.compare(key, from, keyLength, resumeAfter, 0, resumeAfter.length) <= 0) {
        merged.next();
        continue;
      }
      byte[][] values = merged.row().toUser(projection, now, loader);
      if (values != null) {
        // The merged key is read in place and moves on with the cursor: the row gets its own copy.
        next = new Row(Arrays.copyOfRange(key, from, from + keyLength), values);
        merged.next();
        return true;
      }
      merged.next();
    }
    close();
    return false;
  }

  @Override
  public Row next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Row r = next;
    next = null;
    returned++;
    lastKey = r.key();
    return r;
  }

  /**
   * Moves to the next row and leaves it in place: its key and projected values are read with {@link
   * #keyArray()} and {@link #valueArray(int)} and their offsets and lengths, and stay valid until
   * the next call or {@link #close()}. False, and the cursor closed, when no row is left. Counts
   * towards {@link ScanOptions#maxRows}; does not set {@link #lastKey()}.
   *
   * @throws IllegalStateException when the cursor was read with {@link #hasNext()}
   */
  public boolean advance() {
    if (positions == null) {
      if (next != null || returned > 0) {
        throw new IllegalStateException("this cursor is read as an iterator, with next()");
      }
      positions = projection != null ? projection : allPositions(layout.size());
      spans = sources.spans(positions.length);
    }
    if (atRow) {
      atRow = false;
      merged.next();
    }
    if (closed || returned >= maxRows) {
      return false;
    }
    while (merged.valid()) {
      if ((resumeAfter == null
              || Bytes.compare(
                      merged.keyArray(),
                      keyOffset(),
                      keyLength(),
                      resumeAfter,
                      0,
                      resumeAfter.length)
                  > 0)
          && locateValues()) {
        atRow = true;
        returned++;
        return true;
      }
      merged.next();
    }
    close();
    return false;
  }

  private static int[] allPositions(int n) {
    return n < ALL_POSITIONS.length ? ALL_POSITIONS[n] : identity(n);
  }

  private static int[] identity(int n) {
    int[] all = new int[n];
    for (int i = 0; i < n; i++) {
      all[i] = i;
    }
    return all;
  }

  /**
   * Finds where the current row's projected values lie; false when it has none readers see. A row
   * kept encoded whose projected columns are all plain inline puts is read where it lies, any other
   * is decoded as {@link #hasNext()} decodes it.
   */
  private boolean locateValues() {
    if (merged.hasEncodedRow()
        && RowState.inlinePuts(
            layout,
            merged.encodedRow(),
            merged.encodedOffset(),
            merged.encodedLength(),
            positions,
            spans)) {
      decoded = null;
      return true;
    }
    decoded = merged.row().toUser(projection, now, loader);
    return decoded != null;
  }

  /**
   * The key of the row {@link #advance()} stands on: the {@link #keyLength()} bytes at {@link
   * #keyOffset()}.
   */
  public byte[] keyArray() {
    return merged.keyArray();
  }

  public int keyOffset() {
    return merged.keyOffset() + 2;
  }

  public int keyLength() {
    return merged.keyLength() - 2;
  }

  /**
   * The value of projected column {@code k} (its index in the projection, or the column position
   * without one) of the row {@link #advance()} stands on: the {@link #valueLength(int)} bytes at
   * {@link #valueOffset(int)}; null, as {@link Row#column} is, when the column has no value and no
   * default.
   */
  public byte[] valueArray(int k) {
    return decoded != null ? decoded[k] : merged.encodedRow();
  }

  public int valueOffset(int k) {
    return decoded != null ? 0 : (int) (spans[k] >>> 32);
  }

  /** The length of {@link #valueArray(int)}'s value, -1 when it is null. */
  public int valueLength(int k) {
    if (decoded != null) {
      return decoded[k] == null ? -1 : decoded[k].length;
    }
    return (int) spans[k];
  }

  /** Key of the last row returned, or null. */
  public byte[] lastKey() {
    return lastKey;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      atRow = false;
      sources.release();
      version.unref();
    }
  }
}
