package io.cobble;

import io.cobble.cache.BlockCache;
import io.cobble.cache.CachedStorage;
import io.cobble.cache.DiskCache;
import io.cobble.row.Layouts;
import io.cobble.schema.Schema;
import io.cobble.sst.Table;
import io.cobble.storage.Storage;
import io.cobble.util.Bytes;
import io.cobble.util.DirectIo;
import io.cobble.version.ExternalFiles;
import io.cobble.version.FileMeta;
import io.cobble.version.Manifest;
import io.cobble.version.OwnedRanges;
import io.cobble.version.PendingExpansion;
import io.cobble.version.RemotePrimary;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import io.cobble.version.VersionEdit;
import io.cobble.version.VersionSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongUnaryOperator;
import java.util.stream.Stream;

/**
 * Opening a shard's directory: takes its lock, refuses half-restored or misplaced state, recovers
 * the newest intact manifest (locally or from a remote primary), settles an interrupted bucket
 * expansion, opens every table and removes files no manifest refers to.
 */
final class ShardRecovery {
  /** See {@link Db#REMOTE_CACHE_DIR}. */
  static final String REMOTE_CACHE_DIR = "remote-cache";

  /** See {@link Db#RESTORE_MARKER}. */
  static final String RESTORE_MARKER = "RESTORING";

  private ShardRecovery() {}

  /**
   * Recovers the shard in {@code dir}. With {@code remotePrimary} set, the working files and
   * manifests live there and {@code dir} is the local directory that stages new files and caches
   * remote ones; {@code sharedVolume} (or null) holds restored files used in place.
   */
  static ShardState recover(
      Path dir,
      Config config,
      BlockCache cache,
      LongUnaryOperator cacheIds,
      Storage sharedVolume,
      Storage remotePrimary) {
    DirectoryLock lock = DirectoryLock.acquire(dir);
    DirectIo directIo =
        config.directIoEnabled()
            ? new DirectIo(config.directIoBufferSize(), config.directIoPoolMaxSize())
            : null;
    try {
      if (Files.exists(dir.resolve(RESTORE_MARKER))) {
        throw new CobbleException(
            "Db directory "
                + dir
                + " holds an interrupted restore ("
                + RESTORE_MARKER
                + " marker); run the restore again or delete the directory");
      }
      if (remotePrimary == null && Files.isDirectory(dir.resolve(REMOTE_CACHE_DIR))) {
        throw new IllegalArgumentException(
            "Db directory "
                + dir
                + " is the local cache of a Db whose primary volume is remote; open it with"
                + " Db.open(VolumeSet, Config) or Db.open(Storage, Path, Config) and that volume");
      }
      if (remotePrimary != null && RemotePrimary.restoring(remotePrimary)) {
        throw new CobbleException(
            "the primary volume "
                + remotePrimary.uri()
                + " holds an interrupted restore ("
                + RemotePrimary.RESTORING
                + " marker); run the restore again");
      }
      RemotePrimary remote = remotePrimary == null ? null : openRemote(dir, config, remotePrimary);
      Manifest.Recovered recovered = remote != null ? remote.recover() : Manifest.recover(dir);
      Manifest m = recovered.manifest;
      PendingExpansion.recover(dir, m);
      Schema schema = m == null ? Schema.initial() : m.schema;
      if (m != null && m.totalBuckets != config.totalBuckets()) {
        throw new IllegalArgumentException(
            "invalid total-buckets "
                + config.totalBuckets()
                + " for "
                + dir
                + ": the DB was created with "
                + m.totalBuckets
                + " and the bucket count is fixed");
      }
      Layouts layouts = new Layouts(schema, config.mergeOperatorResolver());
      VersionSet versions =
          new VersionSet(
              dir,
              config.totalBuckets(),
              config.maxLevels(),
              m == null ? 1 : m.nextFileNumber,
              recovered.seq,
              schema,
              config.fsyncOnPublish(),
              remote);
      if (remote == null) {
        ExternalFiles.read(dir).ifPresent(x -> versions.adoptExternal(x.locate(sharedVolume, dir)));
      }
      ShardState state =
          new ShardState(
              dir,
              config,
              lock,
              cache,
              cacheIds,
              directIo,
              versions,
              remote,
              layouts,
              (remote != null ? remote.ranges() : OwnedRanges.read(dir))
                  .orElse(config.bucketRanges()));
      List<Tree> trees = recoverTrees(state, m, layouts.familySlots());
      versions.initialize(
          state.newMemTable(),
          trees,
          m == null ? Collections.emptyList() : m.vlogs,
          recovered.previousFiles,
          recovered.previousVlogs);
      // A new writer of a remote primary publishes at once: from then on the writer it replaced
      // can publish nothing, and the orphan sweep below cannot race its uploads into a manifest.
      if (m == null || remote != null) {
        state.mutex.lock();
        try {
          versions.apply(new VersionEdit().schema(schema));
        } finally {
          state.mutex.unlock();
        }
      }
      deleteOrphans(state);
      return state;
    } catch (RuntimeException e) {
      lock.close();
      throw e;
    }
  }

  private static RemotePrimary openRemote(Path dir, Config config, Storage primary) {
    DiskCache disk =
        DiskCache.open(
            dir.resolve(REMOTE_CACHE_DIR),
            primary.uri().toString(),
            config.remoteCacheSize(),
            config.remoteCacheChunkSize());
    return RemotePrimary.open(new CachedStorage(primary, disk));
  }

  private static List<Tree> recoverTrees(ShardState state, Manifest m, int slots) {
    Config config = state.config;
    List<List<List<FileMeta>>> levels = new ArrayList<>();
    for (int f = 0; f < slots; f++) {
      List<List<FileMeta>> l = new ArrayList<>();
      for (int i = 0; i < config.maxLevels(); i++) {
        l.add(new ArrayList<>());
      }
      levels.add(l);
    }
    List<Table> opened = new ArrayList<>();
    try {
      if (m != null) {
        for (Manifest.FileEntry e : m.files) {
          if (e.level >= config.maxLevels()) {
            throw new IllegalArgumentException(
                "invalid compaction.max-levels "
                    + config.maxLevels()
                    + ": the DB in "
                    + state.dir
                    + " has files at level "
                    + e.level);
          }
          Table t = state.openTable(e.number, e.level, e.size, true);
          opened.add(t);
          levels
              .get(e.family)
              .get(e.level)
              .add(new FileMeta(e.number, e.family, e.size, e.properties, t));
        }
      }
    } catch (RuntimeException ex) {
      for (Table t : opened) {
        t.close();
      }
      throw ex;
    }
    List<Tree> trees = new ArrayList<>();
    for (List<List<FileMeta>> l : levels) {
      for (int i = 1; i < l.size(); i++) {
        l.get(i).sort((a, b) -> Bytes.compare(a.smallest(), b.smallest()));
      }
      trees.add(new Tree(l));
    }
    return trees;
  }

  /**
   * Removes files neither the newest nor the previous (fallback) manifest refers to: leftovers of
   * interrupted flushes and compactions, or of a corrupt newest manifest the Db did not open from.
   */
  private static void deleteOrphans(ShardState state) {
    VersionSet versions = state.versions;
    if (state.remote != null) {
      Set<Long> numbers = new HashSet<>(versions.previousManifestFiles());
      Version v = versions.current();
      for (Tree t : v.trees()) {
        for (FileMeta f : t.allFiles()) {
          numbers.add(f.number());
        }
      }
      numbers.addAll(v.vlogs());
      state.remote.sweep(numbers);
    }
    Set<String> live = new HashSet<>();
    // With a remote primary nothing in dir is live: each file moves into the cache once uploaded.
    if (state.remote == null) {
      for (long n : versions.previousManifestFiles()) {
        live.add(versions.tablePath(n).getFileName().toString());
        live.add(versions.vlogPath(n).getFileName().toString());
      }
      Version v = versions.current();
      for (Tree t : v.trees()) {
        for (FileMeta f : t.allFiles()) {
          live.add(versions.tablePath(f.number()).getFileName().toString());
        }
      }
      for (Long n : v.vlogs()) {
        live.add(versions.vlogPath(n).getFileName().toString());
      }
    }
    try (Stream<Path> s = Files.list(state.dir)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        String name = p.getFileName().toString();
        boolean data = name.endsWith(".sst") || name.endsWith(".vlog") || name.endsWith(".tmp");
        if (data && !live.contains(name)) {
          Files.deleteIfExists(p);
        }
      }
    } catch (IOException e) {
      throw new CobbleException("cannot clean up " + state.dir, e);
    }
  }
}
