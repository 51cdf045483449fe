package io.cobble.flink.table.layout;

import java.io.Serializable;

/**
 * How a sink table spreads over storage: {@code bucketCount} buckets split into {@code shardCount}
 * contiguous ranges, shard {@code i} owning {@code [i * buckets / shards, (i + 1) * buckets /
 * shards)}. Writer {@code i} of a sink with {@code shardCount} writers writes shard {@code i} only;
 * contiguous ranges keep a shard's data one key range per tree and let a rescale cut new ranges
 * from the files of neighbouring shards.
 */
public final class TableLayout implements Serializable {

  private static final long serialVersionUID = 1L;

  /** The Cobble column family holding the rows: the engine's default one, as raw readers expect. */
  public static final String FAMILY = "default";

  /** Directory of the inspect schema under the table root. */
  public static final String SCHEMA_DIRECTORY = "schema";

  private final int bucketCount;
  private final int shardCount;

  public TableLayout(int bucketCount, int shardCount) {
    if (bucketCount <= 0 || shardCount <= 0 || shardCount > bucketCount) {
      throw new IllegalArgumentException(
          "need 0 < shards <= buckets, got " + shardCount + " shards of " + bucketCount);
    }
    this.bucketCount = bucketCount;
    this.shardCount = shardCount;
  }

  public int bucketCount() {
    return bucketCount;
  }

  public int shardCount() {
    return shardCount;
  }

  /** First bucket of a shard. */
  public int firstBucket(int shard) {
    return (int) ((long) shard * bucketCount / shardCount);
  }

  /** One past the last bucket of a shard. */
  public int endBucket(int shard) {
    return firstBucket(shard + 1);
  }

  /** The shard (and so the writer) owning a bucket. */
  public int shardOf(int bucket) {
    if (bucket < 0 || bucket >= bucketCount) {
      throw new IllegalArgumentException("bucket " + bucket + " outside [0, " + bucketCount + ")");
    }
    int shard = (int) ((long) bucket * shardCount / bucketCount);
    // The estimate can be one off in either direction because ranges are rounded down.
    while (firstBucket(shard) > bucket) {
      shard--;
    }
    while (endBucket(shard) <= bucket) {
      shard++;
    }
    return shard;
  }

  /** The shard's buckets in the engine's {@code bucket-ranges} syntax (inclusive). */
  public String bucketRanges(int shard) {
    return firstBucket(shard) + "-" + (endBucket(shard) - 1);
  }
}
