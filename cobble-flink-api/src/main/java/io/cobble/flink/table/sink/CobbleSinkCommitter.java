package io.cobble.flink.table.sink;

import io.cobble.flink.table.TableStorage;
import io.cobble.storage.Storage;
import java.util.Map;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * The single global committer of a sink (parallelism 1). Each writer hands on its shard snapshot
 * for checkpoint N before its barrier N. When Flink reports checkpoint N complete and every shard
 * has reported for it, the committer publishes one global snapshot of everything up to N, then
 * retention expires the oldest; a snapshot still in flight (unaligned checkpoints) is waited for
 * (see {@link PendingCommits}), so a global snapshot never mixes checkpoints.
 *
 * <p>Pending shard snapshots are part of the committer's state: after a restore they belong to
 * completed checkpoints (the restored one or earlier), so they are committed as soon as they are
 * complete, and {@link GlobalCommit} makes that a no-op when they were already committed before the
 * failure. At the end of bounded input everything is committed at once, which also covers jobs
 * without checkpoints.
 *
 * <p>Each global snapshot records the Flink checkpoint id it was committed for, which {@code
 * scan.checkpoint-id} names: checkpoint N for a commit at its completion (even when nothing was
 * written since the previous one: the same parts again), the restored checkpoint for a commit of
 * restored snapshots, and for the commit at the end of bounded input the id after the newest
 * checkpoint this committer has seen (1 in a job without checkpoints), which is normally the id of
 * the final checkpoint Flink takes after the end of input.
 */
final class CobbleSinkCommitter extends AbstractStreamOperator<Void>
    implements OneInputStreamOperator<ShardCommit, Void>, BoundedOneInput {

  private static final long serialVersionUID = 1L;

  private final TableStorage table;
  private final int bucketCount;
  private final int retention;

  private transient Storage storage;
  private transient GlobalCommit commits;
  private transient ListState<ShardCommit> pendingState;
  private transient PendingCommits pending;
  // The newest checkpoint id seen: restored, snapshotted or completed.
  private transient long lastCheckpointId;
  // Commits up to the restored checkpoint may be replays: they do not republish unchanged parts.
  private transient long restoredCheckpointId;

  CobbleSinkCommitter(TableStorage table, int bucketCount, int retention) {
    this.table = table;
    this.bucketCount = bucketCount;
    this.retention = retention;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    storage = table.open();
    commits = new GlobalCommit(storage, bucketCount, retention);
    pending = new PendingCommits();
    pendingState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(
                    "cobble-sink-pending-commits", TypeInformation.of(ShardCommit.class)));
    restoredCheckpointId = context.getRestoredCheckpointId().orElse(0);
    lastCheckpointId = restoredCheckpointId;
    pending.restore(pendingState.get());
    pending.complete(restoredCheckpointId).ifPresent(this::commit);
  }

  @Override
  public void processElement(StreamRecord<ShardCommit> element) {
    pending.add(element.getValue());
    pending.due().ifPresent(this::commit);
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    lastCheckpointId = Math.max(lastCheckpointId, context.getCheckpointId());
    pending.checkpointTaken(context.getCheckpointId());
    pendingState.update(pending.state());
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    super.notifyCheckpointComplete(checkpointId);
    lastCheckpointId = Math.max(lastCheckpointId, checkpointId);
    pending.complete(checkpointId).ifPresent(this::commit);
  }

  @Override
  public void endInput() {
    commit(new PendingCommits.Due(lastCheckpointId + 1, pending.drain()), true);
  }

  private void commit(PendingCommits.Due due) {
    commit(due, due.checkpointId > restoredCheckpointId);
  }

  /**
   * One global snapshot of {@code due}'s shards, committed for its checkpoint (see {@link
   * GlobalCommit#commit(Map, long, boolean)}).
   */
  private void commit(PendingCommits.Due due, boolean everyCheckpoint) {
    Map<String, Long> shards = due.shards;
    long checkpointId = due.checkpointId;
    commits
        .commit(shards, checkpointId, everyCheckpoint)
        .ifPresent(
            global ->
                LOG.info(
                    "Committed global snapshot {} of Cobble table {} for checkpoint {}: {} shards",
                    global.id(),
                    table.root(),
                    checkpointId,
                    global.parts().size()));
  }

  @Override
  public void close() throws Exception {
    try {
      super.close();
    } finally {
      if (storage != null) {
        storage.close();
        storage = null;
      }
    }
  }
}
