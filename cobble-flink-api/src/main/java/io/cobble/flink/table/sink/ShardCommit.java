package io.cobble.flink.table.sink;

/**
 * What a sink writer hands to the committer at a checkpoint (or at the end of its input): the
 * published snapshot of its shard. A Flink POJO (public fields, no-argument constructor), so it
 * travels and sits in the committer's state with Flink's own serializer on every line.
 */
public final class ShardCommit {

  /** The checkpoint id of a commit made at the end of bounded input. */
  public static final long END_OF_INPUT = Long.MAX_VALUE;

  /** The checkpoint the snapshot belongs to ({@link #END_OF_INPUT} after the last record). */
  public long checkpointId;

  public String shardId;

  public long snapshotId;

  public ShardCommit() {}

  ShardCommit(long checkpointId, String shardId, long snapshotId) {
    this.checkpointId = checkpointId;
    this.shardId = shardId;
    this.snapshotId = snapshotId;
  }

  @Override
  public String toString() {
    return "snapshot " + snapshotId + " of shard " + shardId + " at checkpoint " + checkpointId;
  }
}
