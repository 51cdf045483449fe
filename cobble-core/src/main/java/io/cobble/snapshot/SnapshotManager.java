package io.cobble.snapshot;

import io.cobble.CobbleException;
import io.cobble.Db;
import io.cobble.storage.Storage;
import io.cobble.storage.Volume;
import io.cobble.storage.VolumeSet;
import io.cobble.version.AdoptedFiles;
import io.cobble.version.ExternalFiles;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import io.cobble.vlog.ValueLogFile;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Takes snapshots of one shard ({@link Db}) onto a snapshot volume. {@link #snapshot()} seals the
 * memtable and returns the id at once; a background thread waits for the sealed data's flush, pins
 * that version (so compaction cannot delete its files), uploads the files the volume does not have
 * yet and publishes the manifest. Snapshots are incremental: a file uploaded once (or used in place
 * after a restore) is referenced by later snapshots, never copied again.
 *
 * <p>Files on the volume are reference-counted by marking: a file goes when no published manifest,
 * pending snapshot, export lease or live version of this Db refers to it. The newest published
 * snapshot is never expired: every file a later snapshot can reference that an earlier one also
 * referenced is still live, so it is in the newest one too, which keeps collection safe while
 * uploads run.
 */
public final class SnapshotManager implements AutoCloseable {
  private static final long CLOSE_TIMEOUT_MINUTES = 5;

  private final Db db;
  private final SnapshotStore store;
  private final String shardId;
  private final int retention;
  private final ExecutorService uploader;
  private final Object lock = new Object();
  private final VolumeFiles files;
  private final TreeMap<Long, PendingSnapshot> pending = new TreeMap<>();
  private final Map<Long, Set<String>> pendingRefs = new HashMap<>();
  private final List<String> inheritedLeases;
  // Leases of files this manager's Db adopted by expanding; each ends with the first snapshot
  // taken after the adoption. Under the lock.
  private final List<String> adoptionLeases = new ArrayList<>();
  private long lastId;
  private boolean closed;
  private Storage ownedStorage;

  private SnapshotManager(Db db, Storage volume, String shardId) {
    this.db = db;
    this.store = new SnapshotStore(volume);
    this.shardId = SnapshotStore.checkShardId(shardId);
    this.retention = db.config().snapshotRetention();
    Optional<ExternalFiles> inPlace = ExternalFiles.read(db.directory());
    if (inPlace.isPresent() && !inPlace.get().isOn(volume)) {
      // Snapshots name files by their path on the volume: files of another volume cannot be named.
      throw new IllegalArgumentException(
          "the Db in "
              + db.directory()
              + " uses files in place on "
              + inPlace.get().root()
              + "; take its snapshots on that volume, not on "
              + volume.uri());
    }
    files =
        new VolumeFiles(
            db, store, this.shardId, inPlace.map(ExternalFiles::files).orElse(Map.of()));
    List<Long> ids = store.snapshotIds(shardId);
    lastId = ids.isEmpty() ? 0 : ids.get(ids.size() - 1);
    // A pin left by a snapshot that failed while the volume was down names an unpublished id:
    // new ids start above it, so it never pins a later snapshot by accident.
    for (long pinnedId : store.pinnedIds(shardId)) {
      lastId = Math.max(lastId, pinnedId);
    }
    store.latest(shardId).ifPresent(files::inherit);
    inheritedLeases = store.leasePaths(shardId);
    // Uploads of snapshots that never got published (crash, cancel) are orphans now: nothing else
    // writes under this shard's data prefix.
    try {
      store.collect(store.dataFiles(shardId), liveVolumePaths());
    } catch (CobbleException e) {
      // A damaged manifest somewhere on the volume: its files might be needed, so the orphans
      // stay until a later sweep can prove they are unreferenced. Snapshots still work.
    }
    uploader =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "cobble-snapshot-" + shardId);
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Manages snapshots of {@code db} as shard {@code shardId} on the snapshot volume of {@code
   * volumes}; the manager opens that volume's storage and closes it on {@link #close()}.
   */
  public static SnapshotManager open(Db db, VolumeSet volumes, String shardId) {
    Volume volume =
        volumes
            .snapshot()
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "no volume of "
                            + volumes
                            + " serves SNAPSHOT; add a volume with kind SNAPSHOT"));
    Storage storage;
    try {
      storage = volume.open();
    } catch (IOException e) {
      throw new CobbleException("cannot open snapshot volume " + volume.uri(), e);
    }
    try {
      SnapshotManager m = new SnapshotManager(db, storage, shardId);
      m.ownedStorage = storage;
      return m;
    } catch (RuntimeException e) {
      try {
        storage.close();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  /**
   * Manages snapshots of {@code db} as shard {@code shardId} on {@code volume}. One manager per
   * shard at a time; it cleans up uploads of snapshots that were never published.
   */
  public static SnapshotManager open(Db db, Storage volume, String shardId) {
    if (db == null || volume == null) {
      throw new IllegalArgumentException("db and volume must not be null");
    }
    return new SnapshotManager(db, volume, shardId);
  }

  public String shardId() {
    return shardId;
  }

  public SnapshotStore store() {
    return store;
  }

  /**
   * Bytes of data files this manager added to the volume: what its incremental snapshots grew the
   * volume by, whether copied or hard-linked ({@link #bytesLinked}).
   */
  public long bytesUploaded() {
    return files.bytesUploaded();
  }

  public long filesUploaded() {
    return files.filesUploaded();
  }

  /**
   * Of {@link #bytesUploaded}, the bytes of tables placed on the volume by a hard link to the
   * working file (volume and working directory on one local file system): no byte was copied.
   */
  public long bytesLinked() {
    return files.bytesLinked();
  }

  public long filesLinked() {
    return files.filesLinked();
  }

  /**
   * Starts a snapshot of everything written before this call and returns without waiting for a
   * flush; the flush, the uploads and the publication run in the background.
   */
  public PendingSnapshot snapshot() {
    PendingSnapshot p;
    CompletableFuture<Version> sealed;
    List<BucketRange> ranges;
    io.cobble.schema.Schema schema;
    List<String> covered;
    synchronized (lock) {
      checkOpen();
      // Adoptions finished before this call are in the sealed version.
      covered = new ArrayList<>(adoptionLeases);
      // Under the lock: snapshot ids follow the order in which their data was sealed.
      ranges = BucketRange.fromPairs(db.ownedBucketRanges());
      schema = db.schema();
      sealed = db.sealForSnapshot();
      p = new PendingSnapshot(++lastId);
      pending.put(p.id(), p);
      pendingRefs.put(p.id(), new HashSet<>());
    }
    PendingSnapshot task = p;
    uploader.execute(() -> upload(task, sealed, schema, ranges, covered));
    return p;
  }

  private void upload(
      PendingSnapshot p,
      CompletableFuture<Version> sealed,
      io.cobble.schema.Schema schema,
      List<BucketRange> ranges,
      List<String> coveredLeases) {
    Version v = null;
    boolean idTaken = false;
    try {
      v = sealed.join();
      synchronized (lock) {
        checkNotCancelled(p);
        pendingRefs.put(p.id(), files.knownPaths(v));
      }
      // Every file of the sealed version has a smaller number, so a restore numbers new files
      // after them.
      long nextFile = db.versionSet().newFileNumber();
      List<SnapshotFile> placed = new ArrayList<>();
      for (int fam = 0; fam < v.trees().size(); fam++) {
        Tree t = v.tree(fam);
        for (int level = 0; level < t.levelCount(); level++) {
          for (FileMeta f : t.level(level)) {
            checkNotCancelled(p);
            String path =
                files.place(
                    f.number(),
                    VolumeFiles.tableName(f.number()),
                    f.size(),
                    f.properties().entries());
            placed.add(SnapshotFile.table(fam, level, f.number(), f.size(), f.properties(), path));
          }
        }
      }
      for (ValueLogFile f : v.vlogFiles().values()) {
        checkNotCancelled(p);
        String path =
            files.place(f.number(), VolumeFiles.vlogName(f.number()), f.size(), f.entries());
        placed.add(SnapshotFile.vlog(f.number(), f.size(), f.entries(), path));
      }
      ShardSnapshot s =
          new ShardSnapshot(
              shardId,
              p.id(),
              System.currentTimeMillis(),
              db.config().totalBuckets(),
              ranges,
              schema,
              nextFile,
              placed);
      synchronized (lock) {
        // Under the lock so that cancel() either wins before publication or reports failure.
        checkNotCancelled(p);
        if (store.manifestExists(shardId, p.id())) {
          // Two managers of one shard at once (an earlier one still publishing): never replace a
          // published snapshot, someone may already rely on its content, nor drop its pin.
          idTaken = true;
          throw new CobbleException(
              "snapshot "
                  + p.id()
                  + " of shard "
                  + shardId
                  + " is already on "
                  + store.storage().uri()
                  + ": another snapshot manager writes this shard; close it before opening a new"
                  + " one");
        }
        store.publish(s);
        pending.remove(p.id());
        pendingRefs.remove(p.id());
      }
      releaseInheritedLeases();
      releaseAdoptionLeases(coveredLeases);
      confirmOwned(placed);
      try {
        applyRetention();
      } catch (RuntimeException e) {
        throw new CobbleException(
            "snapshot " + p.id() + " of shard " + shardId + " is published, but retention failed",
            e);
      }
      p.future().complete(s);
    } catch (Throwable t) {
      synchronized (lock) {
        pending.remove(p.id());
        pendingRefs.remove(p.id());
      }
      p.future().completeExceptionally(t instanceof CompletionException ? t.getCause() : t);
      if (!idTaken) {
        dropPinOfFailed(p.id());
      }
    } finally {
      if (v != null) {
        v.unref();
      }
    }
  }

  /** The published snapshot names these files: those the Db read in place are its own now. */
  private void confirmOwned(List<SnapshotFile> files) {
    List<Long> numbers = new ArrayList<>(files.size());
    for (SnapshotFile f : files) {
      numbers.add(f.number());
    }
    db.confirmOwned(numbers);
  }

  /** A failed snapshot never exists, so a pin taken while it was pending is dropped. */
  private void dropPinOfFailed(long id) {
    try {
      synchronized (lock) {
        if (store.pinnedIds(shardId).contains(id)) {
          store.unpin(shardId, id);
        }
      }
    } catch (RuntimeException e) {
      // The volume may be what failed the snapshot. A pin left behind names an id that is never
      // published (managers number new snapshots above every pin), so it holds nothing back.
    }
  }

  private void checkNotCancelled(PendingSnapshot p) {
    if (p.cancelled) {
      throw new SnapshotCancelledException(shardId, p.id());
    }
  }

  private Set<String> liveVolumePaths() {
    Version v = db.versionSet().acquire();
    try {
      Set<String> live = files.knownPaths(v);
      synchronized (lock) {
        for (Set<String> refs : pendingRefs.values()) {
          live.addAll(refs);
        }
      }
      return live;
    } finally {
      v.unref();
    }
  }

  private void releaseAdoptionLeases(List<String> covered) {
    synchronized (lock) {
      for (String lease : covered) {
        if (adoptionLeases.remove(lease)) {
          store.deleteMetadata(lease);
        }
      }
    }
  }

  /**
   * Expands the Db by {@code ranges} with {@code adopted}, files of the snapshots {@code sources}
   * on this manager's volume, used in place. An export lease of this shard keeps them until the
   * first snapshot taken after this call is published, which refers to them itself. Call {@code
   * Rescale.expandBuckets(SnapshotManager, ...)}, which selects and checks the files.
   *
   * @throws CobbleException if a source snapshot was expired before the lease was in place
   */
  public void adopt(List<BucketRange> ranges, AdoptedFiles adopted, List<ShardRef> sources) {
    ExportLease lease;
    synchronized (lock) {
      checkOpen();
      lease = store.createLease(shardId, adopted.volumePaths());
    }
    for (ShardRef source : sources) {
      if (store.read(source.shardId(), source.snapshotId()).isEmpty()) {
        lease.release();
        throw new CobbleException(source + " was expired while expanding shard " + shardId);
      }
    }
    int[] pairs = new int[ranges.size() * 2];
    for (int i = 0; i < ranges.size(); i++) {
      pairs[2 * i] = ranges.get(i).lo();
      pairs[2 * i + 1] = ranges.get(i).hi();
    }
    try {
      db.expandBuckets(pairs, adopted, store.storage());
    } finally {
      // Even after a failure: if the Db kept the files, the next snapshot owns them; if not, the
      // lease just ends then.
      synchronized (lock) {
        adoptionLeases.add(lease.path());
      }
    }
  }

  /** The Db whose snapshots this manager takes. */
  public Db db() {
    return db;
  }

  private void releaseInheritedLeases() {
    synchronized (lock) {
      for (String lease : inheritedLeases) {
        store.deleteMetadata(lease);
      }
      inheritedLeases.clear();
    }
  }

  /**
   * Cancels a snapshot that is not yet published. Returns false when it is already published,
   * failed or unknown.
   */
  public boolean cancel(long id) {
    synchronized (lock) {
      PendingSnapshot p = pending.get(id);
      if (p == null) {
        return false;
      }
      p.cancelled = true;
      p.future().completeExceptionally(new SnapshotCancelledException(shardId, id));
      return true;
    }
  }

  /**
   * Keeps a snapshot out of retention and {@link #expire} until {@link #unpin}. The pin is stored
   * on the volume: it outlives this manager and holds for every process using the volume.
   */
  public void pin(long id) {
    synchronized (lock) {
      if (!pending.containsKey(id) && !store.snapshotIds(shardId).contains(id)) {
        throw new IllegalArgumentException(
            "cannot pin snapshot " + id + " of shard " + shardId + ": it does not exist");
      }
      store.pin(shardId, id);
    }
  }

  public void unpin(long id) {
    synchronized (lock) {
      store.unpin(shardId, id);
    }
  }

  /** Ids of this shard's pinned snapshots. */
  public Set<Long> pinned() {
    return store.pinnedIds(shardId);
  }

  /** Published snapshot ids, ascending. */
  public List<Long> published() {
    return store.snapshotIds(shardId);
  }

  /**
   * Deletes a published snapshot and the files only it referenced.
   *
   * @throws IllegalStateException if it is pending, pinned or the newest published snapshot
   */
  public void expire(long id) {
    synchronized (lock) {
      if (pending.containsKey(id)) {
        throw new IllegalStateException(
            "snapshot " + id + " of shard " + shardId + " is pending; cancel it instead");
      }
      if (store.pinnedIds(shardId).contains(id)) {
        throw new IllegalStateException(
            "snapshot " + id + " of shard " + shardId + " is pinned; unpin it first");
      }
      List<Long> ids = store.snapshotIds(shardId);
      if (!ids.contains(id)) {
        throw new IllegalArgumentException(
            "snapshot " + id + " of shard " + shardId + " does not exist; published: " + ids);
      }
      if (store.globallyReferenced(shardId).contains(id)) {
        throw new IllegalStateException(
            "snapshot "
                + id
                + " of shard "
                + shardId
                + " is part of a global snapshot; the global retention expires it");
      }
      if (id == ids.get(ids.size() - 1)) {
        throw new IllegalStateException(
            "snapshot "
                + id
                + " is the newest of shard "
                + shardId
                + " and restore needs it; take a newer snapshot first");
      }
      delete(id);
    }
  }

  /**
   * Deletes snapshot {@code id} and collects its files. The global retention (another process) may
   * have deleted it already: then nothing is left to do here, its files are collected there.
   */
  private void delete(long id) {
    List<String> candidates = new ArrayList<>();
    store.read(shardId, id).ifPresent(s -> s.files().forEach(f -> candidates.add(f.volumePath())));
    store.deleteSnapshot(shardId, id);
    List<String> deleted = store.collect(candidates, liveVolumePaths());
    files.forget(deleted);
  }

  private void applyRetention() {
    if (retention == 0) {
      return;
    }
    synchronized (lock) {
      List<Long> ids = store.snapshotIds(shardId);
      Set<Long> global = store.globallyReferenced(shardId);
      Set<Long> pinned = store.pinnedIds(shardId);
      // Neither pending nor the newest; pins are only added under the lock: what expire() checks.
      for (int i = 0; i < ids.size() - retention; i++) {
        if (!pinned.contains(ids.get(i)) && !global.contains(ids.get(i))) {
          delete(ids.get(i));
        }
      }
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("snapshot manager of shard " + shardId + " is closed");
    }
  }

  /**
   * Waits for pending snapshots to publish (or fail), then stops. The wait is not cut short by an
   * interrupt (the interrupt status is kept): a manager whose close returned never writes to the
   * volume again, so the next manager of the shard, which numbers its snapshots after those it
   * finds there, cannot reuse the id of a snapshot still being published behind it. Cancel pending
   * snapshots first to make the wait short.
   */
  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    uploader.shutdown();
    try {
      if (!awaitUploads()) {
        throw new CobbleException(
            "snapshot uploads of shard "
                + shardId
                + " did not finish within "
                + CLOSE_TIMEOUT_MINUTES
                + " minutes");
      }
    } finally {
      if (ownedStorage != null) {
        try {
          ownedStorage.close();
        } catch (IOException e) {
          throw new CobbleException("cannot close snapshot volume " + ownedStorage.uri(), e);
        }
      }
    }
  }

  private boolean awaitUploads() {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(CLOSE_TIMEOUT_MINUTES);
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return uploader.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
