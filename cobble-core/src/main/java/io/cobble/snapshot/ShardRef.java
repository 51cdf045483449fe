package io.cobble.snapshot;

/** A shard snapshot named by shard id and snapshot id. */
public final class ShardRef {
  private final String shardId;
  private final long snapshotId;

  public ShardRef(String shardId, long snapshotId) {
    this.shardId = SnapshotStore.checkShardId(shardId);
    this.snapshotId = snapshotId;
  }

  public static ShardRef of(String shardId, long snapshotId) {
    return new ShardRef(shardId, snapshotId);
  }

  public String shardId() {
    return shardId;
  }

  public long snapshotId() {
    return snapshotId;
  }

  @Override
  public String toString() {
    return "snapshot " + snapshotId + " of shard " + shardId;
  }
}
