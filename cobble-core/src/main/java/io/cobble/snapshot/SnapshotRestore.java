package io.cobble.snapshot;

import io.cobble.CobbleException;
import io.cobble.Config;
import io.cobble.Db;
import io.cobble.EngineOptions;
import io.cobble.storage.Storage;
import io.cobble.version.ExternalFiles;
import io.cobble.version.Manifest;
import io.cobble.vlog.ValueLogFile;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Opens a Db from a shard snapshot. The snapshot's files are used where they lie on the snapshot
 * volume, whatever its storage: restore writes a manifest and an {@link ExternalFiles} list into
 * the working directory and reads only metadata (the snapshot manifest, then each table's footer,
 * properties and index as the Db opens), whatever the state size. Data blocks are read on demand,
 * through the block cache; on object stores as ranged reads. The Db reads through {@code volume},
 * so the caller keeps it open until the Db is closed.
 *
 * <p>These are steps: {@link io.cobble.rescale.ShardOpener} decides which one a restore or rescale
 * needs, and is what callers use.
 */
public final class SnapshotRestore {
  private SnapshotRestore() {}

  /** Resumes shard {@code shardId} from its newest intact snapshot, replacing local state. */
  public static Db resume(Path localDir, Storage volume, String shardId, Config config) {
    ShardSnapshot s = new SnapshotStore(volume).requireLatest(shardId);
    return install(localDir, volume, s, withRanges(config, s.ranges()), null, List.of(), true);
  }

  /** Resumes shard {@code shardId} from snapshot {@code id}, replacing local state. */
  public static Db resume(Path localDir, Storage volume, String shardId, long id, Config config) {
    ShardSnapshot s = new SnapshotStore(volume).require(shardId, id);
    return install(localDir, volume, s, withRanges(config, s.ranges()), null, List.of(), true);
  }

  /**
   * Opens a new shard {@code newShardId} in the empty {@code localDir} from a snapshot of another
   * shard. The Db owns the bucket ranges of {@code config} (which must lie inside the snapshot's);
   * an export lease keeps the source files alive until the new shard's first snapshot refers to
   * them.
   */
  public static Db openFromSnapshot(
      Path localDir,
      Storage volume,
      String sourceShardId,
      long id,
      String newShardId,
      Config config) {
    SnapshotStore.checkShardId(newShardId);
    ShardSnapshot s = new SnapshotStore(volume).require(sourceShardId, id);
    List<BucketRange> wanted = BucketRange.fromPairs(config.bucketRanges());
    if (!BucketRange.covers(s.ranges(), wanted)) {
      throw new IllegalArgumentException(
          "bucket-ranges "
              + BucketRange.toConfigValue(wanted)
              + " are not all inside snapshot "
              + id
              + " of shard "
              + sourceShardId
              + ", which holds "
              + BucketRange.toConfigValue(s.ranges())
              + "; set bucket-ranges to a subset of those");
    }
    return openAssembled(
        localDir, volume, s, config, newShardId, List.of(ShardRef.of(s.shardId(), s.id())));
  }

  /**
   * Opens a new shard {@code newShardId} from an assembled snapshot (files of one or more source
   * snapshots, as rescale cuts them), holding an export lease on its files for the new shard. Fails
   * if any source snapshot was expired before the lease was in place.
   */
  public static Db openAssembled(
      Path localDir,
      Storage volume,
      ShardSnapshot assembled,
      Config config,
      String newShardId,
      List<ShardRef> sources) {
    return install(localDir, volume, assembled, config, newShardId, sources, false);
  }

  private static Config withRanges(Config config, List<BucketRange> ranges) {
    return config.toBuilder()
        .set(EngineOptions.BUCKET_RANGES.key(), BucketRange.toConfigValue(ranges))
        .build();
  }

  private static Db install(
      Path localDir,
      Storage volume,
      ShardSnapshot s,
      Config config,
      String leaseOwner,
      List<ShardRef> sources,
      boolean replace) {
    checkBucketCount(config, s);
    if (leaseOwner != null) {
      List<String> paths = new ArrayList<>();
      s.files().forEach(f -> paths.add(f.volumePath()));
      ExportLease lease = new SnapshotStore(volume).createLease(leaseOwner, paths);
      // The source may have expired the snapshot before the lease existed: then its files may be
      // gone, and the restore must not pretend otherwise.
      for (ShardRef source : sources) {
        if (new SnapshotStore(volume).read(source.shardId(), source.snapshotId()).isEmpty()) {
          lease.release();
          throw new CobbleException(source + " was expired while opening it");
        }
      }
    }
    materialize(localDir, volume, s, config, replace);
    return Db.open(localDir, config, volume);
  }

  /**
   * Writes the working-directory state of snapshot {@code s} into {@code localDir} (a manifest plus
   * the list of files used in place) without opening it; read-only readers open it with their own
   * cache.
   *
   * @param replace whether an existing Db's files in {@code localDir} may be removed
   */
  public static void materialize(
      Path localDir, Storage volume, ShardSnapshot s, Config config, boolean replace) {
    boolean sync = !config.scratchRestore();
    prepareDirectory(localDir, replace, sync);
    Map<Long, String> files = new LinkedHashMap<>();
    for (SnapshotFile f : s.files()) {
      files.put(f.number(), f.volumePath());
    }
    new ExternalFiles(volume.uri(), files).write(localDir, sync);
    Manifest m = manifestOf(s);
    Manifest.writeAtomically(
        localDir.resolve(Manifest.fileName(1)), m.encode(), sync && config.fsyncEnabled());
    try {
      Files.delete(localDir.resolve(Db.RESTORE_MARKER));
    } catch (IOException e) {
      throw new CobbleException("cannot finish restore into " + localDir, e);
    }
  }

  /** Refuses a snapshot taken with another bucket count than {@code config}'s. */
  public static void checkBucketCount(Config config, ShardSnapshot s) {
    if (config.totalBuckets() != s.totalBuckets()) {
      throw new IllegalArgumentException(
          "invalid total-buckets "
              + config.totalBuckets()
              + ": snapshot "
              + s.id()
              + " of shard "
              + s.shardId()
              + " was taken with "
              + s.totalBuckets()
              + " and the bucket count is fixed");
    }
  }

  /** The Db manifest that names exactly the files of snapshot {@code s}, at their levels. */
  public static Manifest manifestOf(ShardSnapshot s) {
    List<Manifest.FileEntry> tables = new ArrayList<>();
    List<ValueLogFile> vlogs = new ArrayList<>();
    for (SnapshotFile f : s.files()) {
      if (f.isVlog()) {
        vlogs.add(new ValueLogFile(f.number(), f.size(), f.vlogEntries()));
      } else {
        tables.add(
            new Manifest.FileEntry(f.family(), f.level(), f.number(), f.size(), f.properties()));
      }
    }
    return new Manifest(s.totalBuckets(), s.nextFileNumber(), s.schema(), tables, vlogs);
  }

  /** Removes an old Db's files so only the snapshot's state remains; refuses an open Db. */
  private static void prepareDirectory(Path dir, boolean replace, boolean sync) {
    try {
      Files.createDirectories(dir);
      try (FileChannel ch =
              FileChannel.open(
                  dir.resolve("LOCK"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
          FileLock lock = ch.tryLock()) {
        if (lock == null) {
          throw new CobbleException("cannot restore into " + dir + ": a Db is open there");
        }
        List<Path> old = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
          files.forEach(
              p -> {
                String n = p.getFileName().toString();
                if (n.startsWith(Manifest.PREFIX)
                    || n.endsWith(".sst")
                    || n.endsWith(".vlog")
                    || n.startsWith(ExternalFiles.FILE_NAME)
                    || n.startsWith(io.cobble.version.OwnedRanges.FILE_NAME)) {
                  old.add(p);
                }
              });
        }
        if (!old.isEmpty() && !replace) {
          throw new IllegalArgumentException(
              "cannot open a snapshot into "
                  + dir
                  + ": it already holds a Db; use an empty directory or resume");
        }
        Path marker = dir.resolve(Db.RESTORE_MARKER);
        try (FileChannel m =
            FileChannel.open(marker, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
          if (sync) {
            m.force(true);
          }
        }
        for (Path p : old) {
          Files.deleteIfExists(p);
        }
      }
    } catch (IOException e) {
      throw new CobbleException("cannot prepare " + dir + " for restore", e);
    }
  }
}
