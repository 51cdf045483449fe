package io.cobble.snapshot;

import io.cobble.CobbleException;

/** Completes the future of a snapshot cancelled before its manifest was published. */
public final class SnapshotCancelledException extends CobbleException {
  public SnapshotCancelledException(String shardId, long id) {
    super("snapshot " + id + " of shard " + shardId + " was cancelled before it was published");
  }
}
