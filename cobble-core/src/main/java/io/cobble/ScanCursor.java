package io.cobble;

import io.cobble.iterator.RowMergingIterator;
import io.cobble.read.ScanSources;
import io.cobble.row.ColumnLayout;
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
 */
public final class ScanCursor implements Iterator<Row>, AutoCloseable {
  private final ValueLoader loader;
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

  ScanCursor(
      Version version,
      ValueLoader loader,
      Clock clock,
      ColumnLayout layout,
      int bucket,
      byte[] start,
      byte[] end,
      int[] projection,
      ScanOptions options) {
    this.loader = loader;
    this.now = clock.nowMillis();
    this.version = version;
    this.projection = projection;
    this.maxRows = options.maxRows();
    this.resumeAfter = options.resumeAfter();
    byte[] endKey =
        end != null
            ? treeKey(bucket, end)
            : Bytes.successor(new byte[] {(byte) (bucket >>> 8), (byte) bucket});
    byte[] from = resumeAfter != null ? resumeAfter : start != null ? start : Bytes.EMPTY;
    if (start != null && Bytes.compare(from, start) < 0) {
      from = start;
    }
    this.sources = ScanSources.acquire();
    try {
      byte[] seekKey = treeKey(bucket, from);
      merged = sources.open(version, layout, loader, seekKey, endKey).upperBound(endKey);
      merged.seek(seekKey);
    } catch (RuntimeException e) {
      sources.release();
      throw e;
    }
  }

  private static byte[] treeKey(int bucket, byte[] key) {
    byte[] out = new byte[2 + key.length];
    out[0] = (byte) (bucket >>> 8);
    out[1] = (byte) bucket;
    System.arraycopy(key, 0, out, 2, key.length);
    return out;
  }

  @Override
  public boolean hasNext() {
    if (next != null) {
      return true;
    }
    if (closed || returned >= maxRows) {
      return false;
    }
    while (merged.valid()) {
      byte[] key = merged.keyArray();
      int keyLength = merged.keyLength();
      if (resumeAfter != null
          && Bytes.compare(key, 2, keyLength - 2, resumeAfter, 0, resumeAfter.length) <= 0) {
        merged.next();
        continue;
      }
      byte[][] values = merged.row().toUser(projection, now, loader);
      if (values != null) {
        // The merged key buffer is reused by the next move: the row gets its own copy.
        next = new Row(Arrays.copyOfRange(key, 2, keyLength), values);
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

  /** Key of the last row returned, or null. */
  public byte[] lastKey() {
    return lastKey;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      sources.release();
      version.unref();
    }
  }
}
