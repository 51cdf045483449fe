package io.cobble.flink.table.source;

import io.cobble.CobbleException;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.reader.ReadOnlyDb;
import io.cobble.reader.Reader;
import io.cobble.reader.ScanSplit;
import io.cobble.reader.SplitScanner;
import io.cobble.snapshot.ShardSnapshot;
import java.util.Arrays;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rows of a change split: the rows of the new snapshot that the previous snapshot over the same
 * buckets does not have, or has with different column values; rows only the previous snapshot has
 * (deletes) are not returned. Candidates are the keys of the {@link ChangedFiles} (in (bucket, key)
 * order), each looked up in both snapshots, so a step after a small commit reads about what the
 * commit wrote, not the table. When the manifests cannot tell which files are new, every row of the
 * split is a candidate. Resuming after a (bucket, key) skips the candidates up to it.
 *
 * <p>The enumerator pins both snapshots while the split is outstanding. Only a source that was
 * stopped for longer than its {@code scan.snapshot-lease-ms} can find the previous shard snapshot
 * expired by the writer's retention: then nothing is left to compare with, every candidate is
 * returned (a superset of the changes, as INSERT rows) and a warning names the cause.
 */
final class ChangedRows implements SplitRows {

  private static final Logger LOG = LoggerFactory.getLogger(ChangedRows.class);

  private final Reader reader;
  private final ScanSplit split;
  private final List<ScanSplit> base;
  private final Candidates candidates;
  private final int[] columns;
  private boolean previousGone;
  private Row next;
  private int nextBucket;
  private int bucket = -1;

  /**
   * @param columns the Cobble columns the returned rows hold (in this order), null for all; rows
   *     are compared on all their columns
   */
  ChangedRows(
      Reader reader,
      ScanSplit split,
      List<ScanSplit> base,
      Optional<ShardSnapshot> files,
      int[] columns) {
    this.reader = reader;
    this.columns = columns;
    this.split = split;
    this.base = base;
    this.candidates =
        files.isPresent()
            ? new NewFileKeys(reader.open(files.get()), split)
            : new AllKeys(reader.scan(split));
  }

  @Override
  public boolean hasNext() {
    while (next == null && candidates.advance()) {
      int rowBucket = candidates.bucket();
      byte[] key = candidates.key();
      byte[][] now = candidates.row();
      if (now == null) {
        now = reader.get(split.shardId(), split.snapshotId(), rowBucket, split.family(), key);
      }
      if (now != null && !Arrays.deepEquals(now, previous(rowBucket, key))) {
        next = new Row(key, select(now));
        nextBucket = rowBucket;
      }
    }
    return next != null;
  }

  private byte[][] select(byte[][] row) {
    if (columns == null) {
      return row;
    }
    byte[][] out = new byte[columns.length][];
    for (int i = 0; i < columns.length; i++) {
      out[i] = columns[i] < row.length ? row[columns[i]] : null;
    }
    return out;
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
    candidates.close();
  }

  /** The row of {@code key} in the previous snapshot, or null (none, or the snapshot is gone). */
  private byte[][] previous(int rowBucket, byte[] key) {
    if (previousGone) {
      return null;
    }
    for (ScanSplit before : base) {
      if (before.firstBucket() <= rowBucket && rowBucket <= before.lastBucket()) {
        try {
          return reader.get(before.shardId(), before.snapshotId(), rowBucket, before.family(), key);
        } catch (CobbleException e) {
          previousGone = true;
          LOG.warn(
              "The previous snapshot of buckets {}-{} ({}) is gone, expired by the writer's"
                  + " snapshot.retention after this source's pin lapsed (was the job stopped for"
                  + " longer than scan.snapshot-lease-ms?); emitting every row of {} instead of"
                  + " its changes.",
              split.firstBucket(),
              split.lastBucket(),
              before,
              split,
              e);
          return null;
        }
      }
    }
    return null;
  }

  /** Candidate keys in (bucket, key) order. */
  private interface Candidates {
    boolean advance();

    int bucket();

    byte[] key();

    /** The key's row in the new snapshot when the candidate is read from it whole, else null. */
    byte[][] row();

    void close();
  }

  /** Every key of the split. */
  private static final class AllKeys implements Candidates {
    private final SplitScanner scanner;
    private Row row;

    AllKeys(SplitScanner scanner) {
      this.scanner = scanner;
    }

    @Override
    public boolean advance() {
      row = scanner.hasNext() ? scanner.next() : null;
      return row != null;
    }

    @Override
    public int bucket() {
      return scanner.bucket();
    }

    @Override
    public byte[] key() {
      return row.key();
    }

    @Override
    public byte[][] row() {
      return row.columns();
    }

    @Override
    public void close() {
      scanner.close();
    }
  }

  /** The keys of the new files, bucket by bucket over the split from its resume position. */
  private static final class NewFileKeys implements Candidates {
    private final ReadOnlyDb files;
    private final ScanSplit split;
    private int bucket;
    private ScanCursor cursor;
    private byte[] key;

    NewFileKeys(ReadOnlyDb files, ScanSplit split) {
      this.files = files;
      this.split = split;
      this.bucket = split.resumeBucket() - 1;
    }

    @Override
    public boolean advance() {
      while (true) {
        if (cursor != null && cursor.hasNext()) {
          key = cursor.next().key();
          return true;
        }
        if (cursor != null) {
          cursor.close();
          cursor = null;
        }
        if (++bucket > split.lastBucket()) {
          key = null;
          return false;
        }
        ScanOptions options = ScanOptions.defaults();
        if (bucket == split.resumeBucket() && split.resumeAfter() != null) {
          options = options.startAfter(split.resumeAfter());
        }
        cursor = files.scan(bucket, split.family(), null, null, options);
      }
    }

    @Override
    public int bucket() {
      return bucket;
    }

    @Override
    public byte[] key() {
      return key;
    }

    @Override
    public byte[][] row() {
      // The new files alone may hold part of the row (merge operands, some columns).
      return null;
    }

    @Override
    public void close() {
      if (cursor != null) {
        cursor.close();
        cursor = null;
      }
      files.close();
    }
  }
}
