package io.cobble.flink.state;

import java.util.List;
import org.apache.flink.runtime.state.KeyGroupRange;

/**
 * The bucket count of a keyed backend's shard. A bucket is a key group, addressed by its absolute
 * number in every row key and manifest, so the count only has to hold every key group the shard and
 * its restored snapshots address: Flink's number of key groups (its maximum parallelism), and at
 * least the end of the backend's range and the count of every restored snapshot.
 *
 * <p>With Flink's own parameters all three are the maximum parallelism. They differ only when a
 * caller passes less, as Flink's {@code StateBackendTestV2Base} does (the size of the range), while
 * its records still carry the key groups of the real maximum parallelism. A real change of the
 * maximum parallelism between a checkpoint and its restore never reaches a backend: Flink's {@code
 * StateAssignmentOperation} either restores with the checkpoint's maximum parallelism or refuses
 * the job before any task starts, so a restored count is taken as is rather than refused.
 */
final class BucketSpace {

  private BucketSpace() {}

  /** The bucket count of a new shard for {@code range}. */
  static int of(int numberOfKeyGroups, KeyGroupRange range) {
    return Math.max(numberOfKeyGroups, range.getEndKeyGroup() + 1);
  }

  /** The bucket count of a shard for {@code range} restored from {@code metas}. */
  static int restored(int numberOfKeyGroups, KeyGroupRange range, List<SnapshotMeta> metas) {
    int buckets = of(numberOfKeyGroups, range);
    for (SnapshotMeta meta : metas) {
      buckets = Math.max(buckets, meta.shard.totalBuckets());
    }
    return buckets;
  }
}
