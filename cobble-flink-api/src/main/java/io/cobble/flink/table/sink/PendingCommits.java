package io.cobble.flink.table.sink;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The shard snapshots the committer holds, keyed by the checkpoint each writer took them for. A
 * checkpoint is due once Flink completed it and every shard of its generation has reported for it
 * (or ended its input earlier). With aligned checkpoints every writer's snapshot arrives before the
 * committer's own barrier, so a completed checkpoint is due at once; with unaligned checkpoints a
 * writer's snapshot can still be in flight (in the channel state) when the checkpoint completes,
 * and publishing without it would pair one shard's checkpoint N with another's N - 1.
 */
final class PendingCommits {

  private final NavigableMap<Long, Map<String, Long>> byCheckpoint = new TreeMap<>();
  // Final snapshots of writers whose input ended: they count as reported for every later
  // checkpoint.
  private final Map<String, Long> ended = new HashMap<>();
  // End-of-input snapshots not yet assigned to a checkpoint of the committer.
  private final Map<String, Long> endedUnassigned = new HashMap<>();
  private long completed;

  /** A due checkpoint and the newest snapshot of every shard that reported up to it. */
  static final class Due {
    final long checkpointId;
    final Map<String, Long> shards;

    Due(long checkpointId, Map<String, Long> shards) {
      this.checkpointId = checkpointId;
      this.shards = shards;
    }
  }

  void add(ShardCommit commit) {
    if (commit.checkpointId == ShardCommit.END_OF_INPUT) {
      ended.merge(commit.shardId, commit.snapshotId, Math::max);
      endedUnassigned.merge(commit.shardId, commit.snapshotId, Math::max);
    } else {
      put(commit.checkpointId, commit.shardId, commit.snapshotId);
    }
  }

  /**
   * The committer takes checkpoint {@code id}: end-of-input snapshots that arrived belong to it.
   */
  void checkpointTaken(long id) {
    endedUnassigned.forEach((shard, snapshot) -> put(id, shard, snapshot));
    endedUnassigned.clear();
  }

  /**
   * Records that Flink completed checkpoint {@code id} and returns the newest checkpoint up to the
   * completed ones that is now due, removing what it covers; empty while a shard is missing.
   */
  Optional<Due> complete(long id) {
    completed = Math.max(completed, id);
    return due();
  }

  /** The newest due checkpoint after more snapshots arrived; empty while a shard is missing. */
  Optional<Due> due() {
    for (Long id : byCheckpoint.headMap(completed, true).descendingKeySet()) {
      if (covered(byCheckpoint.get(id))) {
        Map<String, Long> shards = new HashMap<>();
        NavigableMap<Long, Map<String, Long>> upTo = byCheckpoint.headMap(id, true);
        upTo.values().forEach(m -> m.forEach((s, n) -> shards.merge(s, n, Math::max)));
        upTo.clear();
        return Optional.of(new Due(id, shards));
      }
    }
    return Optional.empty();
  }

  /** Everything pending, then every end-of-input marker, for the committer's operator state. */
  List<ShardCommit> state() {
    List<ShardCommit> all = new ArrayList<>();
    byCheckpoint.forEach(
        (id, shards) -> shards.forEach((s, n) -> all.add(new ShardCommit(id, s, n))));
    ended.forEach((s, n) -> all.add(new ShardCommit(ShardCommit.END_OF_INPUT, s, n)));
    return all;
  }

  /** Restores {@link #state()}: markers only mark shards ended, they were assigned before. */
  void restore(Iterable<ShardCommit> state) {
    for (ShardCommit commit : state) {
      if (commit.checkpointId == ShardCommit.END_OF_INPUT) {
        ended.merge(commit.shardId, commit.snapshotId, Math::max);
      } else {
        put(commit.checkpointId, commit.shardId, commit.snapshotId);
      }
    }
  }

  /** Everything pending at the end of input, in one map; clears it. */
  Map<String, Long> drain() {
    Map<String, Long> shards = new HashMap<>();
    byCheckpoint.values().forEach(m -> m.forEach((s, n) -> shards.merge(s, n, Math::max)));
    endedUnassigned.forEach((s, n) -> shards.merge(s, n, Math::max));
    byCheckpoint.clear();
    endedUnassigned.clear();
    return shards;
  }

  private void put(long checkpointId, String shard, long snapshot) {
    byCheckpoint
        .computeIfAbsent(checkpointId, k -> new HashMap<>())
        .merge(shard, snapshot, Math::max);
  }

  /** Whether every shard of each generation in {@code reported} reported (or ended). */
  private boolean covered(Map<String, Long> reported) {
    Map<Integer, Integer> expected = new HashMap<>();
    Map<Integer, Integer> seen = new HashMap<>();
    for (String shard : reported.keySet()) {
      Optional<ShardId> id = ShardId.tryParse(shard);
      if (id.isEmpty()) {
        return true; // Not a shard id of this sink's writers: nothing to wait for.
      }
      expected.put(id.get().generation(), id.get().count());
      seen.merge(id.get().generation(), 1, Integer::sum);
    }
    for (String shard : ended.keySet()) {
      if (!reported.containsKey(shard)) {
        ShardId.tryParse(shard).ifPresent(id -> seen.merge(id.generation(), 1, Integer::sum));
      }
    }
    for (Map.Entry<Integer, Integer> generation : expected.entrySet()) {
      if (seen.getOrDefault(generation.getKey(), 0) < generation.getValue()) {
        return false;
      }
    }
    return true;
  }
}
