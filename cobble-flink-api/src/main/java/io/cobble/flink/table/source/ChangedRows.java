package io.cobble.flink.table.source;

import io.cobble.CobbleException;
import io.cobble.Row;
import io.cobble.reader.Reader;
import io.cobble.reader.ScanSplit;
import io.cobble.reader.SplitScanner;
import io.cobble.util.Bytes;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rows of a change split: a merge of the new snapshot's rows with the previous snapshot's rows
 * over the same buckets, both in (bucket, key) order. A new row is returned when the previous
 * snapshot has no row with its key, or has one with different column values; rows only the previous
 * snapshot has (deletes) are not returned. Resuming after a (bucket, key) skips both sides up to
 * it.
 *
 * <p>The enumerator pins both snapshots while the split is outstanding. Only a source that was
 * stopped for longer than its {@code scan.snapshot-lease-ms} can find the previous shard snapshot
 * expired by the writer's retention: then nothing is left to compare with, every row of the new
 * range is returned (a superset of the changes, as INSERT rows) and a warning names the cause.
 */
final class ChangedRows implements SplitRows {

  private static final Logger LOG = LoggerFactory.getLogger(ChangedRows.class);

  private final SplitScanner current;
  private final int lastBucket;
  private final PreviousRows previous;
  private Row next;
  private int nextBucket;
  private int bucket = -1;

  ChangedRows(Reader reader, ScanSplit split, List<ScanSplit> base) {
    this.current = reader.scan(split);
    this.lastBucket = split.lastBucket();
    this.previous = new PreviousRows(reader, split, base);
  }

  @Override
  public boolean hasNext() {
    while (next == null && current.hasNext()) {
      Row row = current.next();
      int rowBucket = current.bucket();
      if (!previous.holdsSame(rowBucket, row)) {
        next = row;
        nextBucket = rowBucket;
      }
    }
    return next != null;
  }

  @Override
  public Row next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Row row = next;
    bucket = nextBucket;
    next = null;
    return row;
  }

  @Override
  public int bucket() {
    return bucket;
  }

  @Override
  public void close() {
    current.close();
    previous.close();
  }

  /** The previous snapshot's rows of the split's buckets, walked forward once. */
  private final class PreviousRows {
    private final Reader reader;
    private final ScanSplit split;
    private final Iterator<ScanSplit> splits;
    private SplitScanner scanner;
    private Row row;
    private int rowBucket;

    PreviousRows(Reader reader, ScanSplit split, List<ScanSplit> base) {
      this.reader = reader;
      this.split = split;
      this.splits = base.iterator();
      advance();
    }

    /** Whether the previous snapshot holds {@code candidate} with the same column values. */
    boolean holdsSame(int candidateBucket, Row candidate) {
      while (row != null && compare(rowBucket, row.key(), candidateBucket, candidate.key()) < 0) {
        advance();
      }
      return row != null
          && rowBucket == candidateBucket
          && Arrays.equals(row.key(), candidate.key())
          && Arrays.deepEquals(row.columns(), candidate.columns());
    }

    private void advance() {
      row = null;
      while (true) {
        if (scanner != null && scanner.hasNext()) {
          Row r = scanner.next();
          if (scanner.bucket() > lastBucket) {
            close();
            return;
          }
          row = r;
          rowBucket = scanner.bucket();
          return;
        }
        if (scanner != null) {
          scanner.close();
          scanner = null;
        }
        if (!splits.hasNext()) {
          return;
        }
        scanner = open(splits.next());
      }
    }

    /** A scanner of {@code base} from where the new split resumes; null if nothing is left. */
    private SplitScanner open(ScanSplit base) {
      int from = Math.max(base.firstBucket(), split.resumeBucket());
      if (from > base.lastBucket() || from > lastBucket) {
        return null;
      }
      byte[] after = from == split.resumeBucket() ? split.resumeAfter() : null;
      try {
        return reader.scan(base.after(from, after));
      } catch (CobbleException e) {
        LOG.warn(
            "The previous snapshot of buckets {}-{} ({}) is gone, expired by the writer's"
                + " snapshot.retention after this source's pin lapsed (was the job stopped for"
                + " longer than scan.snapshot-lease-ms?); emitting every row of {} instead of its"
                + " changes.",
            split.firstBucket(),
            split.lastBucket(),
            base,
            split,
            e);
        while (splits.hasNext()) {
          splits.next();
        }
        return null;
      }
    }

    void close() {
      if (scanner != null) {
        scanner.close();
        scanner = null;
      }
      row = null;
    }
  }

  private static int compare(int bucketA, byte[] keyA, int bucketB, byte[] keyB) {
    return bucketA != bucketB ? Integer.compare(bucketA, bucketB) : Bytes.compare(keyA, keyB);
  }
}
