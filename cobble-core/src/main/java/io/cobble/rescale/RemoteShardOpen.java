package io.cobble.rescale;

import io.cobble.CobbleException;
import io.cobble.Db;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.ExportLease;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotRestore;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.DataFile;
import io.cobble.version.RemotePrimary;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The steps of {@link ShardOpener} for a shard whose working files live on a remote primary volume
 * ({@link ShardOpenRequest#primary()}). A remote primary holds only its own files, so what a local
 * shard would use in place is copied onto it: the snapshot's files, then its manifest and owned
 * ranges, under a {@code RESTORING} mark that makes an interrupted restore fail every open until it
 * runs again ({@link RemotePrimary#install}). An export lease keeps the source files while they are
 * copied.
 */
final class RemoteShardOpen {
  private RemoteShardOpen() {}

  /** A new, empty shard on the primary (or the state it already holds). */
  static Db openNew(ShardOpenRequest r) {
    return Db.open(r.primary(), r.workDir(), Rescale.owning(r.config(), r.ranges()));
  }

  /** The shard as snapshot {@code s} of it holds it, owning the snapshot's ranges. */
  static Db resume(ShardSnapshot s, ShardOpenRequest r) {
    install(s, s.ranges(), r, List.of(ShardRef.of(s.shardId(), s.id())));
    return Db.open(r.primary(), r.workDir(), Rescale.owning(r.config(), s.ranges()));
  }

  /** A new shard from the files of other shards' snapshots that hold the requested ranges. */
  static Db assembled(List<ShardRef> sources, ShardOpenRequest r) {
    ShardSnapshot s = Rescale.assemble(r.volume(), sources, r.ranges(), r.shardId(), r.config());
    install(s, r.ranges(), r, sources);
    return Db.open(r.primary(), r.workDir(), Rescale.owning(r.config(), r.ranges()));
  }

  private static void install(
      ShardSnapshot s, List<BucketRange> ranges, ShardOpenRequest r, List<ShardRef> sources) {
    SnapshotRestore.checkBucketCount(r.config(), s);
    SnapshotStore store = new SnapshotStore(r.volume());
    Map<Long, String> paths = new HashMap<>();
    List<String> leased = new ArrayList<>();
    for (SnapshotFile f : s.files()) {
      paths.put(f.number(), f.volumePath());
      leased.add(f.volumePath());
    }
    ExportLease lease = store.createLease(r.shardId(), leased);
    try {
      for (ShardRef source : sources) {
        if (store.read(source.shardId(), source.snapshotId()).isEmpty()) {
          throw new CobbleException(source + " was expired while opening shard " + r.shardId());
        }
      }
      RemotePrimary.install(
          r.primary(),
          SnapshotRestore.manifestOf(s),
          pairs(ranges),
          n -> DataFile.on(r.volume(), paths.get(n)));
    } finally {
      lease.release();
    }
  }

  static int[] pairs(List<BucketRange> ranges) {
    int[] out = new int[ranges.size() * 2];
    for (int i = 0; i < ranges.size(); i++) {
      out[2 * i] = ranges.get(i).lo();
      out[2 * i + 1] = ranges.get(i).hi();
    }
    return out;
  }
}
