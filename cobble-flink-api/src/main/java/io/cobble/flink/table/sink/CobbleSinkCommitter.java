package io.cobble.flink.table.sink;

import io.cobble.flink.table.TableStorage;
import io.cobble.storage.Storage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
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
 * The single global committer of a sink (parallelism 1). Shard snapshots arrive from the writers
 * before each checkpoint barrier; the checkpoint whose state first holds one is the checkpoint it
 * belongs to here. When Flink reports checkpoint N complete, the committer publishes one global
 * snapshot of everything that belongs to checkpoints up to N, then retention expires the oldest.
 *
 * <p>Pending shard snapshots are part of the committer's state: after a restore they all belong to
 * completed checkpoints (the restored one or earlier), so they are committed right away, and {@link
 * GlobalCommit} makes that a no-op when they were already committed before the failure. At the end
 * of bounded input everything is committed at once, which also covers jobs without checkpoints.
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
  private transient List<ShardCommit> arrived;
  private transient NavigableMap<Long, List<ShardCommit>> pending;
  // The newest checkpoint id seen: restored, snapshotted or completed.
  private transient long lastCheckpointId;

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
    arrived = new ArrayList<>();
    pending = new TreeMap<>();
    pendingState =
        context
            .getOperatorStateStore()
            .getListState(
                new ListStateDescriptor<>(
                    "cobble-sink-pending-commits", TypeInformation.of(ShardCommit.class)));
    lastCheckpointId = context.getRestoredCheckpointId().orElse(0);
    List<ShardCommit> restored = new ArrayList<>();
    for (ShardCommit commit : pendingState.get()) {
      restored.add(commit);
    }
    // Restored snapshots may already be committed (then nothing is published): the current global
    // snapshot may be newer than the restored checkpoint, so it is not republished under its id.
    commit(restored, lastCheckpointId, false);
  }

  @Override
  public void processElement(StreamRecord<ShardCommit> element) {
    arrived.add(element.getValue());
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    lastCheckpointId = Math.max(lastCheckpointId, context.getCheckpointId());
    if (!arrived.isEmpty()) {
      pending.computeIfAbsent(context.getCheckpointId(), id -> new ArrayList<>()).addAll(arrived);
      arrived.clear();
    }
    List<ShardCommit> all = new ArrayList<>();
    pending.values().forEach(all::addAll);
    pendingState.update(all);
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    super.notifyCheckpointComplete(checkpointId);
    lastCheckpointId = Math.max(lastCheckpointId, checkpointId);
    NavigableMap<Long, List<ShardCommit>> complete = pending.headMap(checkpointId, true);
    List<ShardCommit> due = new ArrayList<>();
    complete.values().forEach(due::addAll);
    commit(due, checkpointId, true);
    complete.clear();
  }

  @Override
  public void endInput() {
    List<ShardCommit> due = new ArrayList<>();
    pending.values().forEach(due::addAll);
    due.addAll(arrived);
    commit(due, lastCheckpointId + 1, true);
    pending.clear();
    arrived.clear();
  }

  /**
   * One global snapshot of the newest snapshot of every shard among {@code due}, committed for
   * checkpoint {@code checkpointId} (see {@link GlobalCommit#commit(Map, long, boolean)}).
   */
  private void commit(List<ShardCommit> due, long checkpointId, boolean everyCheckpoint) {
    Map<String, Long> shards = new HashMap<>();
    for (ShardCommit commit : due) {
      shards.merge(commit.shardId, commit.snapshotId, Math::max);
    }
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
