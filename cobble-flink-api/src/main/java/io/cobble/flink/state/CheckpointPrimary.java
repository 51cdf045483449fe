package io.cobble.flink.state;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.flink.fs.FlinkFileSystemStorageProvider;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotRestore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.version.FileOwnership;
import io.cobble.version.RemotePrimary;
import io.cobble.version.Version;
import io.cobble.version.VersionSet;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import javax.annotation.Nullable;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStorageLocation;
import org.apache.flink.util.FlinkRuntimeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Db's primary volume on the checkpoint storage ({@code localdir.primary-high-priority=false}):
 * a directory {@code cobble-<id>/} in the job's {@code shared/} checkpoint directory holds the
 * backend's working files, the local directory only stages and caches them. A checkpoint hands
 * Flink its files where they lie, so it uploads nothing but its meta file.
 *
 * <p>Ownership: a file handed to a checkpoint belongs to Flink from then on (its shared state
 * registry deletes it once no retained checkpoint references it, or the checkpoint's discard does
 * when it fails), so the Db forgets such a file when compaction retires it instead of deleting it.
 * Files never handed over stay the Db's: deleted when retired, and when the backend is disposed.
 *
 * <p>A checkpoint that is aborted after it handed a file over for the first time may have Flink
 * delete that file while the Db still reads it; the backend then fails its next checkpoint, so the
 * job recovers from the last completed one instead of completing a checkpoint that lacks the file.
 */
final class CheckpointPrimary implements FileOwnership, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(CheckpointPrimary.class);

  static final String DIR_PREFIX = "cobble-";

  private final Path dir;
  private final AdoptingStorage storage;
  private volatile VersionSet versions;

  /** Numbers of the restored checkpoint's files the Db reads where they lie: Flink's to delete. */
  private final Set<Long> adopted = ConcurrentHashMap.newKeySet();

  /** Object names of the files handed to a checkpoint, by file number. */
  private final Map<Long, String> handed = new ConcurrentHashMap<>();

  // Guarded by this: the checkpoint that first handed each file no confirmed checkpoint holds yet.
  private final Map<Long, Long> unconfirmed = new HashMap<>();
  private String lost;
  // Guarded by this: aborted checkpoints after the last confirmed one.
  private final TreeSet<Long> abortedIds = new TreeSet<>();

  private CheckpointPrimary(Path dir, Storage storage) {
    this.dir = dir;
    this.storage = new AdoptingStorage(storage);
  }

  /**
   * The backend's primary volume under the checkpoint storage's shared directory; fails naming the
   * key when the checkpoint storage keeps no files (the JobManager's) or is not known.
   */
  static CheckpointPrimary create(Supplier<CheckpointStorageAccess> checkpointStorage)
      throws IOException {
    Path shared = sharedDirectory(checkpointStorage);
    Path dir = new Path(shared, DIR_PREFIX + UUID.randomUUID());
    return new CheckpointPrimary(dir, open(dir));
  }

  /** A storage of directory {@code dir}: the engine's provider for files, Flink's otherwise. */
  private static Storage open(Path dir) throws IOException {
    URI uri = dir.toUri();
    return uri.getScheme() == null || "file".equals(uri.getScheme())
        ? StorageProviders.open(
            java.nio.file.Paths.get(uri.getPath()).toUri(), StorageOptions.empty())
        : new FlinkFileSystemStorageProvider().open(uri, StorageOptions.empty());
  }

  private static Path sharedDirectory(Supplier<CheckpointStorageAccess> checkpointStorage) {
    CheckpointStorageAccess access;
    try {
      access = checkpointStorage == null ? null : checkpointStorage.get();
    } catch (UnsupportedOperationException e) {
      access = null;
    }
    if (access == null) {
      throw new IllegalConfigurationException(
          CobbleStateBackendOptions.LOCAL_PRIMARY_HIGH_PRIORITY.key()
              + ": false needs the job's checkpoint storage, which this task does not expose."
              + " Set the key to true.");
    }
    CheckpointStreamFactory location;
    try {
      location =
          access.resolveCheckpointStorageLocation(
              1, CheckpointStorageLocationReference.getDefault());
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot resolve the checkpoint storage location", e);
    }
    if (!(location instanceof FsCheckpointStorageLocation)) {
      throw new IllegalConfigurationException(
          CobbleStateBackendOptions.LOCAL_PRIMARY_HIGH_PRIORITY.key()
              + ": false keeps the working files in the checkpoint directory, but this job's"
              + " checkpoint storage ("
              + access.getClass().getSimpleName()
              + ") keeps no files. Configure a checkpoint directory (a file-system checkpoint"
              + " storage) or set the key to true.");
    }
    return ((FsCheckpointStorageLocation) location).getSharedStateDirectory();
  }

  /** The volume the Db keeps its working files and manifests on. */
  Storage storage() {
    return storage;
  }

  Path directory() {
    return dir;
  }

  /** Takes over the deletion decisions of {@code db}, whose primary this is. */
  void attach(Db db) {
    if (db.versionSet().remote() == null) {
      throw new IllegalStateException("the Db does not work on " + dir);
    }
    versions = db.versionSet();
    versions.fileOwnership(this);
  }

  /** Whether the Db's files are here (a canonical savepoint import opens a local Db instead). */
  boolean serves(Db db) {
    return versions != null && versions == db.versionSet();
  }

  /**
   * Resumes the shard of {@code h}, a checkpoint of this very key-group range, on this volume with
   * the checkpoint's files where they lie: only the engine's manifest, lease and owned ranges are
   * written here, no data file is copied, and the Db opens reading their metadata. The files stay
   * Flink's (its shared state registry deletes them once no retained checkpoint needs them); {@code
   * held} receives Flink's handle of each by its checkpoint identity, so the next checkpoints refer
   * to them by placeholders. Returns null, having written nothing, when a file of the checkpoint is
   * not a file on a file system (the caller restores by copying then).
   */
  @Nullable
  Db resumeInPlace(
      IncrementalRemoteKeyedStateHandle h,
      ShardSnapshot shard,
      java.nio.file.Path dbDir,
      Config config,
      Map<String, StreamStateHandle> held)
      throws IOException {
    Map<String, StreamStateHandle> byName = new HashMap<>();
    for (HandleAndLocalPath f : h.getSharedState()) {
      byName.put(f.getLocalPath(), f.getHandle());
    }
    for (HandleAndLocalPath f : h.getPrivateState()) {
      byName.put(f.getLocalPath(), f.getHandle());
    }
    Map<String, Storage> dirs = new HashMap<>();
    Map<SnapshotFile, AdoptingStorage.Location> locations = new LinkedHashMap<>();
    try {
      for (SnapshotFile f : shard.files()) {
        StreamStateHandle fh = byName.get(f.volumePath());
        if (!(fh instanceof FileStateHandle)) {
          closeAll(dirs.values());
          return null;
        }
        Path file = ((FileStateHandle) fh).getFilePath();
        Storage parent = dirs.get(file.getParent().toString());
        if (parent == null) {
          parent = open(file.getParent());
          dirs.put(file.getParent().toString(), parent);
        }
        locations.put(f, new AdoptingStorage.Location(parent, file.getName()));
      }
    } catch (IOException | RuntimeException e) {
      closeAll(dirs.values());
      throw e;
    }
    locations.forEach(
        (f, location) -> {
          storage.adopt(RemotePrimary.adoptedPath(f.number(), f.isVlog()), location);
          adopted.add(f.number());
          String name = String.format(f.isVlog() ? "%06d.vlog" : "%06d.sst", f.number());
          held.put(CheckpointFiles.identity(name, f.size()), byName.get(f.volumePath()));
        });
    SnapshotRestore.checkBucketCount(config, shard);
    int[] ranges = new int[shard.ranges().size() * 2];
    for (int i = 0; i < shard.ranges().size(); i++) {
      ranges[2 * i] = shard.ranges().get(i).lo();
      ranges[2 * i + 1] = shard.ranges().get(i).hi();
    }
    RemotePrimary.installAdopted(storage, SnapshotRestore.manifestOf(shard), ranges);
    return Db.open(storage, dbDir, config);
  }

  private static void closeAll(Iterable<Storage> storages) {
    for (Storage s : storages) {
      try {
        s.close();
      } catch (IOException | RuntimeException e) {
        LOG.debug("Closing {} failed", s.uri(), e);
      }
    }
  }

  /**
   * Files handed to a checkpoint or adopted from the restored one are Flink's: the Db forgets them,
   * and so does the primary's name map, once they are dead.
   */
  @Override
  public boolean mayDelete(long number, boolean vlog) {
    if (handed.containsKey(number) || adopted.contains(number)) {
      versions.remote().forget(number);
      return false;
    }
    return true;
  }

  /**
   * Flink's handle of a working file, where it lies; {@code taken} collects it for {@link
   * #handedOver} once the checkpoint is ready to be handed to Flink.
   */
  StreamStateHandle handle(long number, boolean vlog, long size, Map<Long, String> taken) {
    String path = versions.remote().path(number, vlog);
    taken.put(number, path);
    return new FileStateHandle(new Path(dir, path), size);
  }

  /**
   * Whether {@code number} can be handed over where it lies: never handed over yet, or held by a
   * confirmed checkpoint, and not adopted from the restored checkpoint (those are referenced by
   * placeholders). A file an unconfirmed checkpoint holds is not: if that checkpoint is aborted (or
   * subsumed while pending) Flink deletes the file, also from under a later checkpoint naming it,
   * so a later checkpoint gets a copy of its own.
   */
  synchronized boolean inPlace(long number) {
    return !unconfirmed.containsKey(number) && !adopted.contains(number);
  }

  /** The files of checkpoint {@code checkpointId}, about to be handed over, are Flink's now. */
  synchronized void handedOver(Map<Long, String> taken, long checkpointId) {
    taken.forEach(
        (number, path) -> {
          if (handed.putIfAbsent(number, path) == null) {
            unconfirmed.put(number, checkpointId);
          }
        });
    if (abortedIds.contains(checkpointId)) {
      // Aborted while its asynchronous part ran: Flink discards what that part returns.
      lostIn(checkpointId);
    }
  }

  /** Fails when an aborted checkpoint may have taken a file the Db still uses with it. */
  synchronized void checkIntact() throws IOException {
    if (lost != null) {
      throw new IOException(lost);
    }
  }

  /** Files first handed to checkpoints up to {@code checkpointId} are safe now. */
  synchronized void completed(long checkpointId) {
    unconfirmed.values().removeIf(id -> id <= checkpointId);
    abortedIds.headSet(checkpointId, true).clear();
  }

  /**
   * Flink discards the files checkpoint {@code checkpointId} was first to hold: if the Db still
   * uses one, later checkpoints must not refer to it.
   */
  synchronized void aborted(long checkpointId) {
    abortedIds.add(checkpointId);
    lostIn(checkpointId);
  }

  private void lostIn(long checkpointId) {
    Set<Long> taken = new HashSet<>();
    unconfirmed.forEach(
        (number, first) -> {
          if (first == checkpointId) {
            taken.add(number);
          }
        });
    if (taken.isEmpty() || lost != null) {
      return;
    }
    unconfirmed.keySet().removeAll(taken);
    Version v = versions.acquire();
    try {
      Set<Long> live = new HashSet<>(v.vlogs());
      v.trees().forEach(t -> t.allFiles().forEach(f -> live.add(f.number())));
      taken.retainAll(live);
    } finally {
      v.unref();
    }
    if (!taken.isEmpty()) {
      lost =
          "checkpoint "
              + checkpointId
              + " was aborted after it took over "
              + taken.size()
              + " working file(s) of the Cobble shard in "
              + dir
              + "; Flink discards them, so this shard cannot take further checkpoints and the"
              + " job must recover from its last completed checkpoint";
      LOG.warn(lost);
    }
  }

  /**
   * Deletes the Db's own files (never handed to a checkpoint) and its manifests; call after the Db
   * closed. Files handed over stay for Flink to delete.
   */
  @Override
  public void close() {
    try {
      List<String> own = new ArrayList<>(storage.list(""));
      own.removeAll(handed.values());
      storage.deleteAll(own);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Could not delete the working files of the Cobble shard in {}", dir, e);
    } finally {
      try {
        storage.close();
      } catch (Exception e) {
        LOG.debug("Closing {} failed", dir, e);
      }
    }
  }
}
