package io.cobble.flink.table.source;

import io.cobble.reader.ScanSplit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.api.connector.source.SourceSplit;

/**
 * One bucket range of one global snapshot, as a reader works through it. A <em>full</em> split
 * emits every row of its range; a <em>change</em> split (streaming mode, after the first snapshot)
 * emits only the rows that changed since the previous global snapshot, which {@link #previous()}
 * names by its scan splits over the same buckets. {@link #scan()} carries the resume position: a
 * split taken from a checkpoint continues after the last row it emitted.
 */
public final class CobbleSourceSplit implements SourceSplit {

  private final String id;
  private final long globalId;
  private final int totalBuckets;
  private final ScanSplit scan;
  private final List<ScanSplit> previous;

  CobbleSourceSplit(
      String id, long globalId, int totalBuckets, ScanSplit scan, List<ScanSplit> previous) {
    this.id = id;
    this.globalId = globalId;
    this.totalBuckets = totalBuckets;
    this.scan = scan;
    this.previous = Collections.unmodifiableList(new ArrayList<>(previous));
  }

  /** A split of every row of {@code scan}, or of its changes when {@code previous} is not empty. */
  static CobbleSourceSplit of(
      long globalId, int totalBuckets, ScanSplit scan, List<ScanSplit> previous) {
    String id =
        "g" + globalId + "/" + scan.shardId() + "/" + scan.firstBucket() + "-" + scan.lastBucket();
    return new CobbleSourceSplit(id, globalId, totalBuckets, scan, previous);
  }

  @Override
  public String splitId() {
    return id;
  }

  /** The global snapshot this split belongs to. */
  public long globalId() {
    return globalId;
  }

  /** The bucket count of the table, so that enumerators place splits by bucket. */
  public int totalBuckets() {
    return totalBuckets;
  }

  /** The rows to read, starting after the resume position it carries. */
  public ScanSplit scan() {
    return scan;
  }

  /** The previous global snapshot's scan splits over these buckets; empty for a full split. */
  public List<ScanSplit> previous() {
    return previous;
  }

  public boolean isChangeSplit() {
    return !previous.isEmpty();
  }

  /** The same split, continuing after {@code key} in {@code bucket}. */
  CobbleSourceSplit resumeAfter(int bucket, byte[] key) {
    return new CobbleSourceSplit(id, globalId, totalBuckets, scan.after(bucket, key), previous);
  }

  @Override
  public String toString() {
    return (isChangeSplit() ? "changes " : "rows ") + id + " from " + scan;
  }
}
