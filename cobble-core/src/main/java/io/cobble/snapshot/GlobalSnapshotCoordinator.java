package io.cobble.snapshot;

import io.cobble.CobbleException;
import io.cobble.storage.MetadataFile;
import io.cobble.storage.Storage;
import io.cobble.util.ByteWriter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Combines one published shard snapshot per bucket range into a numbered global snapshot and moves
 * {@code global/CURRENT} to it. Rejects sets of shard snapshots whose ranges leave a gap or
 * overlap. Retention keeps the newest global snapshots and those an unexpired {@link GlobalPin}
 * names, and expires the shard snapshots (and files) that only expired global snapshots referred
 * to; it also removes expired pins. One coordinator per volume at a time.
 */
public final class GlobalSnapshotCoordinator {
  private final SnapshotStore store;
  private final int totalBuckets;
  private final int retention;
  private final LongSupplier clock;

  /**
   * @param retention global snapshots to keep (newest first); 0 keeps all
   */
  public GlobalSnapshotCoordinator(Storage volume, int totalBuckets, int retention) {
    this(volume, totalBuckets, retention, System::currentTimeMillis);
  }

  /**
   * @param retention global snapshots to keep (newest first); 0 keeps all
   * @param clock wall-clock milliseconds, compared with the expiry of {@link GlobalPin}s
   */
  public GlobalSnapshotCoordinator(
      Storage volume, int totalBuckets, int retention, LongSupplier clock) {
    if (totalBuckets < 1 || totalBuckets > 65536) {
      throw new IllegalArgumentException(
          "invalid total-buckets " + totalBuckets + ": expected 1..65536");
    }
    if (retention < 0) {
      throw new IllegalArgumentException("invalid global retention " + retention + ": need >= 0");
    }
    this.store = new SnapshotStore(volume);
    this.totalBuckets = totalBuckets;
    this.retention = retention;
    this.clock = clock;
  }

  /** Publishes a global snapshot of the given shard snapshots and makes it CURRENT. */
  public GlobalSnapshot commit(List<ShardRef> shards) {
    return commit(shards, GlobalSnapshot.NO_CHECKPOINT);
  }

  /**
   * Publishes a global snapshot of the given shard snapshots, recording that it was committed for
   * checkpoint {@code checkpointId}, and makes it CURRENT.
   */
  public GlobalSnapshot commit(List<ShardRef> shards, long checkpointId) {
    List<GlobalSnapshot.Part> parts = new ArrayList<>();
    for (ShardRef ref : shards) {
      ShardSnapshot s = store.require(ref.shardId(), ref.snapshotId());
      if (s.totalBuckets() != totalBuckets) {
        throw new IllegalArgumentException(
            "snapshot "
                + s.id()
                + " of shard "
                + s.shardId()
                + " has "
                + s.totalBuckets()
                + " buckets, the global snapshot "
                + totalBuckets);
      }
      parts.add(new GlobalSnapshot.Part(s.shardId(), s.id(), s.ranges()));
    }
    checkCoverage(parts);
    List<Long> ids = store.globalIds();
    long id = ids.isEmpty() ? 1 : ids.get(ids.size() - 1) + 1;
    GlobalSnapshot g = new GlobalSnapshot(id, totalBuckets, parts, checkpointId);
    try {
      MetadataFile.publish(store.storage(), SnapshotStore.globalPath(id), g.encode());
      ByteWriter w = new ByteWriter(10);
      w.writeVarLong(id);
      MetadataFile.publish(store.storage(), SnapshotStore.CURRENT, w.toByteArray());
    } catch (IOException e) {
      throw new CobbleException("cannot publish global snapshot " + id, e);
    }
    applyRetention();
    return g;
  }

  private void checkCoverage(List<GlobalSnapshot.Part> parts) {
    List<Object[]> ranges = new ArrayList<>();
    for (GlobalSnapshot.Part p : parts) {
      for (BucketRange r : p.ranges()) {
        ranges.add(new Object[] {r, p});
      }
    }
    ranges.sort((a, b) -> ((BucketRange) a[0]).compareTo((BucketRange) b[0]));
    int next = 0;
    GlobalSnapshot.Part previous = null;
    for (Object[] e : ranges) {
      BucketRange r = (BucketRange) e[0];
      GlobalSnapshot.Part p = (GlobalSnapshot.Part) e[1];
      if (r.lo() > next) {
        throw new IllegalArgumentException(
            "buckets " + next + "-" + (r.lo() - 1) + " are covered by no shard snapshot");
      }
      if (r.lo() < next) {
        throw new IllegalArgumentException(
            "buckets "
                + r.lo()
                + "-"
                + Math.min(r.hi(), next - 1)
                + " are covered by both "
                + describe(previous)
                + " and "
                + describe(p));
      }
      next = r.hi() + 1;
      previous = p;
    }
    if (next < totalBuckets) {
      throw new IllegalArgumentException(
          "buckets " + next + "-" + (totalBuckets - 1) + " are covered by no shard snapshot");
    }
  }

  private static String describe(GlobalSnapshot.Part p) {
    return "snapshot " + p.snapshotId() + " of shard " + p.shardId();
  }

  /** The global snapshot CURRENT points to. */
  public GlobalSnapshot current() {
    return read(store.requireCurrentGlobalId());
  }

  public GlobalSnapshot read(long id) {
    return store.requireGlobal(id);
  }

  public List<Long> ids() {
    return store.globalIds();
  }

  /**
   * Global snapshot ids the unexpired pins name; expired pins are removed. Runs after CURRENT
   * moved, so a reader that pins the CURRENT it read and then finds CURRENT unchanged knows that
   * every later retention pass sees its pin.
   */
  private Set<Long> pinnedGlobalIds() {
    Set<Long> pinned = new HashSet<>();
    long now = clock.getAsLong();
    for (GlobalPin pin : store.globalPins()) {
      if (pin.expiredAt(now)) {
        store.releaseGlobalPin(pin.owner());
      } else {
        pinned.addAll(pin.globalIds());
      }
    }
    return pinned;
  }

  private void applyRetention() {
    if (retention == 0) {
      return;
    }
    Set<Long> pinned = pinnedGlobalIds();
    List<Long> ids = store.globalIds();
    if (ids.size() <= retention) {
      return;
    }
    List<Long> expired = new ArrayList<>();
    for (long id : ids.subList(0, ids.size() - retention)) {
      if (!pinned.contains(id)) {
        expired.add(id);
      }
    }
    Set<String> kept = new HashSet<>();
    for (long id : ids) {
      if (!expired.contains(id)) {
        store.readGlobal(id).ifPresent(g -> g.parts().forEach(p -> kept.add(key(p))));
      }
    }
    Set<GlobalSnapshot.Part> dropShardSnapshots = new LinkedHashSet<>();
    for (long id : expired) {
      store
          .readGlobal(id)
          .ifPresent(
              g -> {
                for (GlobalSnapshot.Part p : g.parts()) {
                  if (!kept.contains(key(p))) {
                    dropShardSnapshots.add(p);
                  }
                }
              });
      store.deleteMetadata(SnapshotStore.globalPath(id));
    }
    List<String> candidates = new ArrayList<>();
    for (GlobalSnapshot.Part p : dropShardSnapshots) {
      List<Long> shardIds = store.snapshotIds(p.shardId());
      // The newest snapshot of a shard stays: the shard may be restored from it, and pending
      // uploads may reference its files (see SnapshotManager).
      if (shardIds.isEmpty() || shardIds.get(shardIds.size() - 1) == p.snapshotId()) {
        continue;
      }
      store
          .read(p.shardId(), p.snapshotId())
          .ifPresent(s -> s.files().forEach(f -> candidates.add(f.volumePath())));
      store.deleteSnapshot(p.shardId(), p.snapshotId());
    }
    store.collect(candidates, Collections.emptySet());
  }

  /**
   * Deletes every snapshot of {@code shardId}, a shard that no global snapshot uses any more (its
   * writer was replaced, as by a change of the writer count), its export leases, and those of its
   * files nothing else refers to. Files another shard adopted in place stay: that shard's snapshots
   * or export leases refer to them.
   *
   * @param releasePins whether pins on the shard's snapshots go too (the caller knows they were
   *     left by the shard's own, replaced writer); otherwise a pin keeps the shard
   * @return the deleted data files
   * @throws IllegalStateException if a global snapshot refers to the shard, or a snapshot of it is
   *     pinned and {@code releasePins} is false
   */
  public List<String> dropShard(String shardId, boolean releasePins) {
    Set<Long> referenced = store.globallyReferenced(shardId);
    if (!referenced.isEmpty()) {
      throw new IllegalStateException(
          "shard " + shardId + " is still part of global snapshots; its snapshots " + referenced);
    }
    Set<Long> pinned = store.pinnedIds(shardId);
    if (!pinned.isEmpty() && !releasePins) {
      throw new IllegalStateException(
          "shard " + shardId + " has pinned snapshots " + pinned + "; unpin them first");
    }
    for (long id : pinned) {
      store.unpin(shardId, id);
    }
    Set<String> candidates = new LinkedHashSet<>(store.dataFiles(shardId));
    for (long id : store.snapshotIds(shardId)) {
      store
          .read(shardId, id)
          .ifPresent(s -> s.files().forEach(f -> candidates.add(f.volumePath())));
    }
    for (long id : store.snapshotIds(shardId)) {
      store.deleteSnapshot(shardId, id);
    }
    for (String lease : store.leasePaths(shardId)) {
      store.deleteMetadata(lease);
    }
    return store.collect(candidates, Collections.emptySet());
  }

  private static String key(GlobalSnapshot.Part p) {
    return p.shardId() + "/" + p.snapshotId();
  }
}
