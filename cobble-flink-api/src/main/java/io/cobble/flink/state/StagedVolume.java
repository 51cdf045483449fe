package io.cobble.flink.state;

import io.cobble.Db;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.DataFile;
import io.cobble.storage.file.FileStorage;
import io.cobble.version.FileMeta;
import io.cobble.version.FileOwnership;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import io.cobble.vlog.ValueLogFile;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

/**
 * The restored checkpoint files of a keyed backend laid out as an engine snapshot volume, so the
 * engine's {@link io.cobble.rescale.ShardOpener} can open the shard from them (resume, cut, join).
 * Each handle's files that the opened shard reads (those with key groups it owns) go under {@code
 * src-<n>/} by their local names: hard links when they lie on a local file system (no data copied,
 * and Flink deleting its file later leaves the link), copies through the handle otherwise. Each
 * handle's manifest, of those files, is published under the shard id it was taken as, with its file
 * paths pointing there and the bucket count of the shard being opened (buckets are absolute key
 * groups, so a manifest holds the same rows under any count that covers its ranges; see {@link
 * BucketSpace}). The opened shard uses the files in place; as the {@link FileOwnership} of its Db
 * the volume drops each staged file once compaction has replaced it, so a source file's bytes
 * outlive Flink's deletion only while the shard still reads that very file.
 */
final class StagedVolume implements FileOwnership {

  private final Path root;
  private final FileStorage storage;
  private final SnapshotStore store;

  /** Flink's handle of each staged file, by its path in the volume. */
  private final Map<Path, StreamStateHandle> handles = new ConcurrentHashMap<>();

  /**
   * The bucket count of the shard opened from this volume, which every staged manifest gets; {@link
   * #AS_RECORDED} when each keeps its own (read-only views of single manifests).
   */
  private final int totalBuckets;

  private static final int AS_RECORDED = -1;

  private int sources;

  private StagedVolume(Path root, FileStorage storage, int totalBuckets) {
    this.root = root;
    this.storage = storage;
    this.store = new SnapshotStore(storage);
    this.totalBuckets = totalBuckets;
  }

  static StagedVolume create(Path dir) throws IOException {
    return create(dir, AS_RECORDED);
  }

  static StagedVolume create(Path dir, int totalBuckets) throws IOException {
    Path root = dir.toAbsolutePath().normalize();
    Files.createDirectories(root);
    return new StagedVolume(root, FileStorage.open(root, false), totalBuckets);
  }

  /** The volume the opened shard reads its files through; it is never closed while the Db is. */
  FileStorage storage() {
    return storage;
  }

  /** The shard id a backend owning {@code lo..hi} names its manifests with. */
  static String shardId(int lo, int hi) {
    return "kg-" + lo + "-" + hi;
  }

  /** Stages every file of one restored handle and publishes its manifest; returns the manifest. */
  ShardSnapshot add(
      IncrementalRemoteKeyedStateHandle h, ShardSnapshot shard, CloseableRegistry cancel)
      throws IOException {
    return stage(h, shard, shard.files(), cancel);
  }

  /**
   * Stages the files of one restored handle that a shard owning {@code requested} reads ({@link
   * #needed}) and publishes a manifest of just those; returns the manifest. The others are neither
   * linked nor copied, so nothing here keeps them once Flink deletes them.
   */
  ShardSnapshot add(
      IncrementalRemoteKeyedStateHandle h,
      ShardSnapshot shard,
      List<BucketRange> requested,
      CloseableRegistry cancel)
      throws IOException {
    return stage(h, shard, needed(shard, requested), cancel);
  }

  private ShardSnapshot stage(
      IncrementalRemoteKeyedStateHandle h,
      ShardSnapshot shard,
      List<SnapshotFile> wanted,
      CloseableRegistry cancel)
      throws IOException {
    String dir = "src-" + sources++;
    Files.createDirectories(root.resolve(dir));
    Map<String, StreamStateHandle> byName = new HashMap<>();
    for (HandleAndLocalPath f : h.getSharedState()) {
      byName.put(f.getLocalPath(), f.getHandle());
    }
    for (HandleAndLocalPath f : h.getPrivateState()) {
      byName.put(f.getLocalPath(), f.getHandle());
    }
    List<SnapshotFile> files = new ArrayList<>();
    for (SnapshotFile f : wanted) {
      StreamStateHandle handle = byName.get(f.volumePath());
      if (handle == null) {
        throw new IOException(
            "checkpoint "
                + h.getCheckpointId()
                + " of key groups "
                + h.getKeyGroupRange()
                + " lacks file "
                + f.volumePath()
                + " that its Cobble manifest lists; the checkpoint is incomplete");
      }
      String path = dir + "/" + f.volumePath();
      Path target = root.resolve(path);
      Files.deleteIfExists(target);
      if (!link(handle, target)) {
        copy(handle, target, cancel);
      }
      handles.put(target.normalize(), handle);
      files.add(
          f.isVlog()
              ? SnapshotFile.vlog(f.number(), f.size(), f.vlogEntries(), path)
              : SnapshotFile.table(
                  f.family(), f.level(), f.number(), f.size(), f.properties(), path));
    }
    ShardSnapshot staged =
        new ShardSnapshot(
            shard.shardId(),
            shard.id(),
            shard.createdMillis(),
            totalBuckets == AS_RECORDED ? shard.totalBuckets() : totalBuckets,
            shard.ranges(),
            shard.schema(),
            shard.nextFileNumber(),
            files);
    store.publish(staged);
    return staged;
  }

  /**
   * The files of {@code shard} a shard owning {@code requested} reads: the tables whose buckets
   * (first to last) reach a requested bucket {@code shard} holds, and the value logs those point
   * into. The others hold only rows of buckets the opened shard does not own from this snapshot
   * (the engine's rescale leaves them out too; a resume would only skip their rows).
   */
  static List<SnapshotFile> needed(ShardSnapshot shard, List<BucketRange> requested) {
    List<BucketRange> part = new ArrayList<>();
    for (BucketRange held : shard.ranges()) {
      for (BucketRange r : requested) {
        if (held.overlaps(r)) {
          part.add(BucketRange.of(Math.max(held.lo(), r.lo()), Math.min(held.hi(), r.hi())));
        }
      }
    }
    List<SnapshotFile> tables = new ArrayList<>();
    Set<Long> logs = new HashSet<>();
    for (SnapshotFile f : shard.files()) {
      if (f.isVlog()) {
        continue;
      }
      BucketRange span = f.bucketSpan();
      for (BucketRange p : part) {
        if (p.overlaps(span)) {
          tables.add(f);
          logs.addAll(f.properties().vlogRefs().keySet());
          break;
        }
      }
    }
    List<SnapshotFile> out = new ArrayList<>(tables);
    for (SnapshotFile f : shard.files()) {
      if (f.isVlog() && logs.contains(f.number())) {
        out.add(f);
      }
    }
    return out;
  }

  /**
   * Flink's handles of the staged files the opened {@code db} uses in place, by the identity its
   * next checkpoint gives them ({@link CheckpointFiles#identity}): that checkpoint refers to them
   * by placeholders instead of handing them over again. Files of a copied shard are its own and
   * absent here.
   */
  Map<String, StreamStateHandle> usedBy(Db db) {
    Map<String, StreamStateHandle> used = new HashMap<>();
    Version v = db.versionSet().acquire();
    try {
      for (Tree t : v.trees()) {
        for (int level = 0; level < t.levelCount(); level++) {
          for (FileMeta f : t.level(level)) {
            put(
                used,
                db.versionSet().tableFile(f.number()),
                String.format("%06d.sst", f.number()),
                f.size());
          }
        }
      }
      for (ValueLogFile f : v.vlogFiles().values()) {
        put(
            used,
            db.versionSet().vlogFile(f.number()),
            String.format("%06d.vlog", f.number()),
            f.size());
      }
    } finally {
      v.unref();
    }
    return used;
  }

  /** The Db deletes its own files as usual; staged ones are this volume's. */
  @Override
  public boolean mayDelete(long number, boolean vlog) {
    return true;
  }

  /**
   * The Db opened from this volume no longer reads a staged file (compaction rewrote it): the link
   * or copy goes, so only Flink's checkpoints decide how long the file's bytes live.
   */
  @Override
  public void externalReleased(long number, boolean vlog, DataFile file) {
    if (!file.isLocal()) {
      return;
    }
    Path p = file.localPath().toAbsolutePath().normalize();
    if (handles.remove(p) != null) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException e) {
        // Removed with the backend's working directory at dispose.
      }
    }
  }

  private void put(Map<String, StreamStateHandle> used, DataFile file, String name, long size) {
    StreamStateHandle h =
        file.isLocal() ? handles.get(file.localPath().toAbsolutePath().normalize()) : null;
    if (h != null) {
      used.put(CheckpointFiles.identity(name, size), h);
    }
  }

  private static boolean link(StreamStateHandle handle, Path target) {
    if (!(handle instanceof FileStateHandle)) {
      return false;
    }
    URI uri = ((FileStateHandle) handle).getFilePath().toUri();
    if (uri.getScheme() != null && !"file".equals(uri.getScheme())) {
      return false;
    }
    try {
      Files.createLink(target, Paths.get(uri.getPath()));
      return true;
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return false;
    }
  }

  private static void copy(StreamStateHandle handle, Path target, CloseableRegistry cancel)
      throws IOException {
    FSDataInputStream in = handle.openInputStream();
    cancel.registerCloseable(in);
    try (InputStream s = in) {
      Files.copy(s, target);
    } finally {
      cancel.unregisterCloseable(in);
    }
  }
}
