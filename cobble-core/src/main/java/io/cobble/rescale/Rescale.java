package io.cobble.rescale;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.EngineOptions;
import io.cobble.schema.Schema;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.snapshot.SnapshotRestore;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.util.ByteWriter;
import io.cobble.util.Bytes;
import io.cobble.version.AdoptedFiles;
import io.cobble.vlog.ValueLogFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Rescale without rewriting data: {@link #shrinkBuckets} narrows an open shard (files stay, reads
 * filter, compaction drops rows of buckets given up); {@link #expandBuckets(Path, Storage, List,
 * List, String, Config)} opens a new shard from the files of one or more source snapshots that
 * cover its ranges, and {@link #expandBuckets(SnapshotManager, List, List)} grows an open shard by
 * such ranges. Source files are used in place on the snapshot volume under an export lease that
 * lasts until the target's next snapshot owns them. {@link ShardOpener} chooses between these steps
 * when a shard opens from snapshots.
 */
public final class Rescale {
  private Rescale() {}

  public static void shrinkBuckets(Db db, List<BucketRange> ranges) {
    int[] pairs = new int[ranges.size() * 2];
    for (int i = 0; i < ranges.size(); i++) {
      pairs[2 * i] = ranges.get(i).lo();
      pairs[2 * i + 1] = ranges.get(i).hi();
    }
    db.shrinkBuckets(pairs);
  }

  /**
   * Opens shard {@code newShardId} in the empty {@code localDir}, owning {@code ranges}, from the
   * given source snapshots; every bucket of {@code ranges} must be owned by exactly one source.
   * Source files that hold no wanted bucket are left out; the others are adopted as they are. The
   * new shard reads them through {@code volume}, which the caller keeps open until the shard is
   * closed.
   *
   * @throws IllegalArgumentException if the sources do not fit together: bucket counts, schema ids,
   *     coverage, or a source file that still holds rows of a bucket another source serves (compact
   *     that source after its shrink first)
   */
  public static Db expandBuckets(
      Path localDir,
      Storage volume,
      List<ShardRef> sources,
      List<BucketRange> ranges,
      String newShardId,
      Config config) {
    ShardSnapshot assembled = assemble(volume, sources, ranges, newShardId, config);
    return SnapshotRestore.openAssembled(
        localDir, volume, assembled, owning(config, ranges), newShardId, sources);
  }

  /**
   * The snapshot of shard {@code newShardId} that {@link #expandBuckets(Path, Storage, List, List,
   * String, Config)} opens: the files of {@code sources} that hold {@code ranges}, tables
   * renumbered.
   */
  static ShardSnapshot assemble(
      Storage volume,
      List<ShardRef> sources,
      List<BucketRange> ranges,
      String newShardId,
      Config config) {
    Selection sel = Selection.of(volume, sources, ranges, config.totalBuckets());
    long next = 0;
    for (ShardSnapshot s : sel.snaps) {
      next = Math.max(next, s.nextFileNumber());
    }
    List<SnapshotFile> files = new ArrayList<>();
    for (SnapshotFile f : sel.tables) {
      // Table numbers are renumbered so files of different sources cannot collide; value-log
      // numbers are kept, since table rows point into logs by number.
      files.add(
          SnapshotFile.table(
              f.family(), f.level(), next++, f.size(), f.properties(), f.volumePath()));
    }
    files.addAll(sel.vlogs.values());
    checkLevels(files);
    ShardSnapshot assembled =
        new ShardSnapshot(
            newShardId,
            0,
            System.currentTimeMillis(),
            config.totalBuckets(),
            ranges,
            sel.snaps.get(0).schema(),
            next,
            files);
    return assembled;
  }

  /**
   * Grows the open shard of {@code target} by {@code ranges}, which it must not own yet, taking
   * over the files of the source snapshots (on {@code target}'s volume) that hold them: every
   * bucket of {@code ranges} must be owned by exactly one source. Files are used in place, as
   * {@link #expandBuckets(Path, Storage, List, List, String, Config)} does, under an export lease
   * of the target's shard that ends when its next snapshot is published. The shard keeps serving
   * its own buckets; rows of the new buckets its own files still hold from before it gave them up
   * are dropped first, and an adopted file that also holds rows of buckets the target owns is
   * copied without them. Durable on return; after a crash the shard reopens with all or none of it.
   * The target's Db reads the adopted files through the manager's volume storage, which stays open
   * until the Db is closed (close the Db before the manager, or reopen the Db with the volume).
   *
   * <p>This is how rescale in Flink merges shards: a running shard keeps its buckets and absorbs
   * ranges cut from the snapshots of shards that go away.
   *
   * @throws IllegalArgumentException if the sources do not fit: bucket counts or schema ids that
   *     differ from the target's, buckets the target already owns, coverage, or a source file that
   *     still holds rows of a bucket another source serves
   */
  public static void expandBuckets(
      SnapshotManager target, List<ShardRef> sources, List<BucketRange> ranges) {
    target.adopt(
        ranges,
        adoptable(target.db(), target.shardId(), target.store().storage(), sources, ranges),
        sources);
  }

  /**
   * The files of {@code sources} on {@code volume} that hold {@code ranges}, for shard {@code
   * shardId} (open as {@code db}) to adopt; checks what {@link #expandBuckets(SnapshotManager,
   * List, List)} documents.
   */
  static AdoptedFiles adoptable(
      Db db, String shardId, Storage volume, List<ShardRef> sources, List<BucketRange> ranges) {
    List<BucketRange> owned = BucketRange.fromPairs(db.ownedBucketRanges());
    for (BucketRange r : ranges) {
      for (BucketRange o : owned) {
        if (r.overlaps(o)) {
          throw new IllegalArgumentException(
              "cannot expand shard "
                  + shardId
                  + " by buckets "
                  + r
                  + ": it already owns "
                  + o
                  + " (owned: "
                  + BucketRange.toConfigValue(owned)
                  + "); expand only by buckets it does not own");
        }
      }
    }
    Selection sel = Selection.of(volume, sources, ranges, db.config().totalBuckets());
    for (int i = 0; i < sel.snaps.size(); i++) {
      if (sel.snaps.get(i).schemaId() != db.schema().id()) {
        throw new IllegalArgumentException(
            sources.get(i)
                + " has schema id "
                + sel.snaps.get(i).schemaId()
                + ", shard "
                + shardId
                + " has "
                + db.schema().id()
                + "; apply the same schema changes to both and snapshot the source again");
      }
    }
    List<AdoptedFiles.TableFile> tables = new ArrayList<>();
    for (int i = 0; i < sel.tables.size(); i++) {
      SnapshotFile f = sel.tables.get(i);
      tables.add(
          new AdoptedFiles.TableFile(
              sel.tableSources.get(i),
              f.family(),
              f.level(),
              f.size(),
              f.properties(),
              f.volumePath()));
    }
    List<AdoptedFiles.LogFile> logs = new ArrayList<>();
    for (SnapshotFile f : sel.vlogs.values()) {
      logs.add(
          new AdoptedFiles.LogFile(
              new ValueLogFile(f.number(), f.size(), f.vlogEntries()), f.volumePath()));
    }
    return new AdoptedFiles(tables, logs);
  }

  /** {@code config} with {@code bucket-ranges} set to {@code ranges}. */
  static Config owning(Config config, List<BucketRange> ranges) {
    return config.toBuilder()
        .set(EngineOptions.BUCKET_RANGES.key(), BucketRange.toConfigValue(ranges))
        .build();
  }

  /** The source snapshots, the part of the wanted ranges each serves and the files holding it. */
  private static final class Selection {
    final List<ShardSnapshot> snaps = new ArrayList<>();
    final List<SnapshotFile> tables = new ArrayList<>();
    final List<Integer> tableSources = new ArrayList<>();
    final Map<Long, SnapshotFile> vlogs = new TreeMap<>();

    static Selection of(
        Storage volume, List<ShardRef> sources, List<BucketRange> ranges, int totalBuckets) {
      if (sources.isEmpty() || ranges.isEmpty()) {
        throw new IllegalArgumentException("expandBuckets needs at least one source and one range");
      }
      Selection sel = new Selection();
      SnapshotStore store = new SnapshotStore(volume);
      List<ShardSnapshot> snaps = sel.snaps;
      for (ShardRef ref : sources) {
        ShardSnapshot s = store.require(ref.shardId(), ref.snapshotId());
        if (s.totalBuckets() != totalBuckets) {
          throw new IllegalArgumentException(
              ref + " has " + s.totalBuckets() + " buckets, the config " + totalBuckets);
        }
        // Files name their family by id, so equal ids are not enough: the families must match.
        if (!snaps.isEmpty() && !sameSchema(snaps.get(0).schema(), s.schema())) {
          throw new IllegalArgumentException(
              "sources have different schemas (ids "
                  + snaps.get(0).schemaId()
                  + " and "
                  + s.schemaId()
                  + "); apply the same schema changes to every source and snapshot them again");
        }
        snaps.add(s);
      }
      // Which source serves each wanted bucket range piece.
      List<List<BucketRange>> parts = new ArrayList<>();
      for (ShardSnapshot s : snaps) {
        List<BucketRange> part = new ArrayList<>();
        for (BucketRange w : ranges) {
          for (BucketRange r : s.ranges()) {
            if (w.overlaps(r)) {
              part.add(BucketRange.of(Math.max(w.lo(), r.lo()), Math.min(w.hi(), r.hi())));
            }
          }
        }
        if (part.isEmpty()) {
          throw new IllegalArgumentException(
              "snapshot "
                  + s.id()
                  + " of shard "
                  + s.shardId()
                  + " holds none of the buckets "
                  + BucketRange.toConfigValue(ranges));
        }
        parts.add(part);
      }
      checkCoverage(ranges, parts, sources);
      Map<Long, String> vlogPaths = new TreeMap<>();
      for (int i = 0; i < snaps.size(); i++) {
        ShardSnapshot s = snaps.get(i);
        for (SnapshotFile f : s.files()) {
          if (f.isVlog()) {
            continue;
          }
          BucketRange span = f.bucketSpan();
          if (!intersects(span, parts.get(i))) {
            continue;
          }
          for (int j = 0; j < snaps.size(); j++) {
            if (j != i && intersects(span, parts.get(j))) {
              throw new IllegalArgumentException(
                  "file "
                      + f.volumePath()
                      + " of "
                      + sources.get(i)
                      + " holds buckets "
                      + span
                      + ", some served by "
                      + sources.get(j)
                      + "; compact shard "
                      + s.shardId()
                      + " after its shrink (compaction drops buckets it gave up) and snapshot it"
                      + " again");
            }
          }
          sel.tables.add(f);
          sel.tableSources.add(i);
          for (long log : f.properties().vlogRefs().keySet()) {
            SnapshotFile v = find(s, log);
            String known = vlogPaths.putIfAbsent(log, v.volumePath());
            if (known != null && !known.equals(v.volumePath())) {
              throw new IllegalArgumentException(
                  "value-log number "
                      + log
                      + " names different files in the sources ("
                      + known
                      + ", "
                      + v.volumePath()
                      + "); these shards cannot be combined");
            }
            sel.vlogs.put(log, v);
          }
        }
      }
      return sel;
    }
  }

  static boolean sameSchema(Schema a, Schema b) {
    ByteWriter wa = new ByteWriter(256);
    a.encode(wa);
    ByteWriter wb = new ByteWriter(256);
    b.encode(wb);
    return Arrays.equals(wa.toByteArray(), wb.toByteArray());
  }

  private static SnapshotFile find(ShardSnapshot s, long vlog) {
    for (SnapshotFile f : s.files()) {
      if (f.isVlog() && f.number() == vlog) {
        return f;
      }
    }
    throw new IllegalArgumentException(
        "snapshot " + s.id() + " of shard " + s.shardId() + " lacks value log " + vlog);
  }

  private static boolean intersects(BucketRange span, List<BucketRange> part) {
    for (BucketRange p : part) {
      if (p.overlaps(span)) {
        return true;
      }
    }
    return false;
  }

  private static void checkCoverage(
      List<BucketRange> ranges, List<List<BucketRange>> parts, List<ShardRef> sources) {
    for (BucketRange w : ranges) {
      for (int b = w.lo(); b <= w.hi(); b++) {
        int owners = 0;
        for (List<BucketRange> part : parts) {
          for (BucketRange p : part) {
            owners += p.contains(b) ? 1 : 0;
          }
        }
        if (owners != 1) {
          throw new IllegalArgumentException(
              "bucket "
                  + b
                  + " is held by "
                  + owners
                  + " of the sources "
                  + sources
                  + "; each wanted bucket needs exactly one");
        }
      }
    }
  }

  /** Sorted levels of different sources must not overlap once combined. */
  private static void checkLevels(List<SnapshotFile> files) {
    Map<String, List<SnapshotFile>> byLevel = new TreeMap<>();
    for (SnapshotFile f : files) {
      if (!f.isVlog() && f.level() > 0) {
        byLevel.computeIfAbsent(f.family() + "/" + f.level(), k -> new ArrayList<>()).add(f);
      }
    }
    for (List<SnapshotFile> level : byLevel.values()) {
      level.sort((a, b) -> Bytes.compare(a.properties().smallest(), b.properties().smallest()));
      for (int i = 1; i < level.size(); i++) {
        if (Bytes.compare(
                level.get(i - 1).properties().largest(), level.get(i).properties().smallest())
            >= 0) {
          throw new IllegalArgumentException(
              "files "
                  + level.get(i - 1).volumePath()
                  + " and "
                  + level.get(i).volumePath()
                  + " overlap at level "
                  + level.get(i).level()
                  + "; compact the sources after their shrink first");
        }
      }
    }
  }
}
