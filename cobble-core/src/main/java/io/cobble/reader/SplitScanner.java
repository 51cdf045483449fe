package io.cobble.reader;

import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * Iterates the rows of a {@link ScanSplit}, bucket by bucket in order. {@link #remaining()} is the
 * split that continues after the last row returned.
 */
public final class SplitScanner implements Iterator<Row>, AutoCloseable {
  private final ReadOnlyDb shard;
  private final ScanSplit split;
  private final ColumnProjection projection;
  private int bucket;
  private ScanCursor cursor;
  private int lastBucket = -1;
  private byte[] lastKey;

  /**
   * @param projection the columns to read, or null for all
   */
  SplitScanner(ReadOnlyDb shard, ScanSplit split, ColumnProjection projection) {
    this.shard = shard;
    this.split = split;
    this.projection = projection;
    this.bucket = split.resumeBucket();
    this.cursor =
        projection != null && projection.empty() ? null : open(bucket, split.resumeAfter());
  }

  private ScanCursor open(int b, byte[] after) {
    ScanOptions options = ScanOptions.defaults();
    if (projection != null) {
      options = projection.scanOptions(options);
    }
    if (after != null) {
      options = options.startAfter(after);
    }
    return shard.scan(b, split.family(), null, null, options);
  }

  @Override
  public boolean hasNext() {
    while (cursor != null && !cursor.hasNext()) {
      cursor.close();
      cursor = ++bucket <= split.lastBucket() ? open(bucket, null) : null;
    }
    return cursor != null;
  }

  @Override
  public Row next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Row r = cursor.next();
    if (projection != null) {
      byte[][] columns = projection.expand(r.columns());
      if (columns != r.columns()) {
        r = new Row(r.key(), columns);
      }
    }
    lastBucket = bucket;
    lastKey = r.key();
    return r;
  }

  /** Bucket of the row {@link #next()} returned last. */
  public int bucket() {
    return lastBucket;
  }

  /** The split that resumes after the last row returned (the whole split if none was). */
  public ScanSplit remaining() {
    return lastKey == null ? split : split.after(lastBucket, lastKey);
  }

  @Override
  public void close() {
    if (cursor != null) {
      cursor.close();
      cursor = null;
    }
  }
}
