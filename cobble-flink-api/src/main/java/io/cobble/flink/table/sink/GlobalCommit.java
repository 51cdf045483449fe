package io.cobble.flink.table.sink;

import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.GlobalSnapshotCoordinator;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the global snapshots of a sink table on its root. A commit names the newest snapshot of
 * each shard that reported since the last commit; shards of the same generation that did not report
 * (a writer whose bounded input ended earlier) keep their part of the current global snapshot.
 * Committing is idempotent: shard snapshot ids only grow, so a commit whose snapshots the current
 * global snapshot already holds (or supersedes with a newer generation) publishes nothing, which
 * makes replaying restored committables safe.
 *
 * <p>After a commit, the shards of older generations (a writer count that changed) that no retained
 * global snapshot uses any more are dropped with their files, except files the new generation
 * adopted in place (its snapshots or export leases still refer to them).
 */
final class GlobalCommit {

  private static final Logger LOG = LoggerFactory.getLogger(GlobalCommit.class);

  private final SnapshotStore store;
  private final GlobalSnapshotCoordinator coordinator;

  GlobalCommit(Storage table, int bucketCount, int retention) {
    this.store = new SnapshotStore(table);
    this.coordinator = new GlobalSnapshotCoordinator(table, bucketCount, retention);
  }

  /**
   * Publishes one global snapshot holding {@code shards} (shard id to snapshot id, all of one
   * generation) for Flink checkpoint {@code checkpointId}; returns it, or empty when the current
   * global snapshot already covers them.
   */
  Optional<GlobalSnapshot> commit(Map<String, Long> shards, long checkpointId) {
    return commit(shards, checkpointId, false);
  }

  /**
   * Like {@link #commit(Map, long)}; with {@code everyCheckpoint}, a checkpoint whose shard
   * snapshots the current global snapshot already covers (nothing was written) still gets a global
   * snapshot of the current parts, unless the current one is already for that checkpoint: so that
   * every completed checkpoint names a global snapshot for {@code scan.checkpoint-id}.
   */
  Optional<GlobalSnapshot> commit(
      Map<String, Long> shards, long checkpointId, boolean everyCheckpoint) {
    if (shards.isEmpty()) {
      return Optional.empty();
    }
    int generation = generationOf(shards.keySet());
    Map<String, Long> parts = new TreeMap<>();
    Optional<Long> currentId = store.currentGlobalId();
    if (currentId.isPresent()) {
      GlobalSnapshot current = store.requireGlobal(currentId.get());
      int currentGeneration = generationOf(partIds(current));
      if (currentGeneration > generation) {
        return Optional.empty();
      }
      if (currentGeneration == generation) {
        current.parts().forEach(p -> parts.put(p.shardId(), p.snapshotId()));
        if (covers(parts, shards) && (!everyCheckpoint || current.checkpointId() == checkpointId)) {
          return Optional.empty();
        }
      }
    }
    shards.forEach((shard, snapshot) -> parts.merge(shard, snapshot, Math::max));
    List<ShardRef> refs = new ArrayList<>();
    parts.forEach((shard, snapshot) -> refs.add(ShardRef.of(shard, snapshot)));
    GlobalSnapshot committed = coordinator.commit(refs, checkpointId);
    try {
      dropOldGenerations(generation);
    } catch (RuntimeException e) {
      // The commit stands; what is left is only garbage, retried after the next commit.
      LOG.warn("Cannot drop the shards of earlier writer counts yet; retrying later", e);
    }
    return Optional.of(committed);
  }

  /**
   * Drops the shards of generations before {@code generation} that no retained global snapshot
   * refers to, with the pins their writers left on snapshots no global snapshot came to cover: a
   * newer generation is committed, so no writer of theirs runs or restores any more.
   */
  private void dropOldGenerations(int generation) {
    List<String> older = new ArrayList<>();
    for (String shard : store.shardIds()) {
      Optional<ShardId> parsed = ShardId.tryParse(shard);
      if (parsed.isPresent() && parsed.get().generation() < generation) {
        older.add(shard);
      }
    }
    if (older.isEmpty()) {
      return;
    }
    Set<String> used = new HashSet<>();
    for (long id : store.globalIds()) {
      store.readGlobal(id).ifPresent(g -> g.parts().forEach(p -> used.add(p.shardId())));
    }
    for (String shard : older) {
      if (!used.contains(shard)) {
        List<String> deleted = coordinator.dropShard(shard, true);
        LOG.info(
            "Dropped shard {} of an earlier writer count and {} of its files",
            shard,
            deleted.size());
      }
    }
  }

  private static boolean covers(Map<String, Long> committed, Map<String, Long> shards) {
    for (Map.Entry<String, Long> shard : shards.entrySet()) {
      Long snapshot = committed.get(shard.getKey());
      if (snapshot == null || snapshot < shard.getValue()) {
        return false;
      }
    }
    return true;
  }

  private static List<String> partIds(GlobalSnapshot global) {
    List<String> ids = new ArrayList<>();
    global.parts().forEach(p -> ids.add(p.shardId()));
    return ids;
  }

  private static int generationOf(Iterable<String> shardIds) {
    int generation = -1;
    for (String id : shardIds) {
      int g = ShardId.parse(id).generation();
      if (generation >= 0 && g != generation) {
        throw new IllegalStateException(
            "Shards of generations " + generation + " and " + g + " in one commit: " + shardIds);
      }
      generation = g;
    }
    return generation;
  }
}
