package io.cobble.flink.state;

import io.cobble.Db;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.storage.DataFile;
import io.cobble.storage.StorageInput;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import io.cobble.vlog.ValueLogFile;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SnapshotType.SharingFilesStrategy;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResources;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategy;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStorageLocation;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.IOUtils;

/**
 * Checkpoints of a Cobble keyed backend. The synchronous phase only seals the memtable (and takes
 * the state meta data); the asynchronous phase waits for that flush, hands Flink the shard's files
 * (placeholders for files a confirmed checkpoint already holds, the new ones through the stream
 * factory) and writes the meta file, as one {@link IncrementalRemoteKeyedStateHandle}.
 */
final class CobbleSnapshotStrategy<K>
    implements SnapshotStrategy<KeyedStateHandle, CobbleSnapshotStrategy.Resources> {

  private static final int COPY_BUFFER = 64 * 1024;
  // Windows cannot open a directory as a channel; NTFS journals directory entries itself.
  private static final boolean WINDOWS =
      System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows");

  private final CobbleKeyedStateCore<K> core;
  private final UUID backendId;
  private final CheckpointFiles files;

  CobbleSnapshotStrategy(CobbleKeyedStateCore<K> core, UUID backendId, CheckpointFiles files) {
    this.core = core;
    this.backendId = backendId;
    this.files = files;
  }

  /** What the synchronous phase captured; releasing it unpins the sealed version. */
  static final class Resources implements SnapshotResources {
    final List<StateMetaInfoSnapshot> states;
    final io.cobble.schema.Schema schema;
    final List<BucketRange> ranges;
    final CompletableFuture<Version> sealed;

    Resources(
        List<StateMetaInfoSnapshot> states,
        io.cobble.schema.Schema schema,
        List<BucketRange> ranges,
        CompletableFuture<Version> sealed) {
      this.states = states;
      this.schema = schema;
      this.ranges = ranges;
      this.sealed = sealed;
    }

    @Override
    public void release() {
      sealed.thenAccept(Version::unref);
    }
  }

  @Override
  public Resources syncPrepareResources(long checkpointId) {
    Db db = core.db;
    return new Resources(
        core.metaInfoSnapshots(),
        db.schema(),
        BucketRange.fromPairs(db.ownedBucketRanges()),
        db.sealForSnapshot());
  }

  @Override
  public SnapshotResultSupplier<KeyedStateHandle> asyncSnapshot(
      Resources resources,
      long checkpointId,
      long timestamp,
      CheckpointStreamFactory streamFactory,
      CheckpointOptions options) {
    if (resources.states.isEmpty()) {
      return registry -> SnapshotResult.empty();
    }
    SharingFilesStrategy sharing = options.getCheckpointType().getSharingFilesStrategy();
    return registry -> run(resources, checkpointId, timestamp, streamFactory, sharing, registry);
  }

  private SnapshotResult<KeyedStateHandle> run(
      Resources resources,
      long checkpointId,
      long timestamp,
      CheckpointStreamFactory streamFactory,
      SharingFilesStrategy sharing,
      CloseableRegistry registry)
      throws Exception {
    List<StreamStateHandle> uploaded = new ArrayList<>();
    try {
      return run(resources, checkpointId, timestamp, streamFactory, sharing, registry, uploaded);
    } catch (Exception e) {
      // Flink never learns of these files: a failed snapshot removes what it wrote.
      for (StreamStateHandle h : uploaded) {
        try {
          h.discardState();
        } catch (Exception suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
  }

  private SnapshotResult<KeyedStateHandle> run(
      Resources resources,
      long checkpointId,
      long timestamp,
      CheckpointStreamFactory streamFactory,
      SharingFilesStrategy sharing,
      CloseableRegistry registry,
      List<StreamStateHandle> uploaded)
      throws Exception {
    Version v = resources.sealed.join();
    Db db = core.db;
    boolean reuse = sharing == SharingFilesStrategy.FORWARD_BACKWARD;
    CheckpointedStateScope scope =
        sharing == SharingFilesStrategy.NO_SHARING
            ? CheckpointedStateScope.EXCLUSIVE
            : CheckpointedStateScope.SHARED;
    Map<String, StreamStateHandle> confirmed = reuse ? files.confirmed() : Collections.emptyMap();
    // Working files on the checkpoint storage are handed over where they lie, except to a
    // savepoint, which must own copies.
    CheckpointPrimary inPlace =
        reuse && core.primary != null && core.primary.serves(db) ? core.primary : null;
    Map<Long, String> taken = new HashMap<>();
    if (inPlace != null) {
      inPlace.checkIntact();
    }
    Map<String, StreamStateHandle> handed = new HashMap<>();
    // Once Flink confirms a checkpoint that shares its files, those the shard read in place from a
    // restored checkpoint are kept by Flink for it, and the shard may rewrite them.
    List<Long> numbers = new ArrayList<>();
    List<HandleAndLocalPath> shared = new ArrayList<>();
    List<SnapshotFile> manifestFiles = new ArrayList<>();
    // Files the checkpoint refers to where they lie (the checkpoint primary's, and those linked
    // into shared/): written without fsync under fsync.policy=snapshot, so fsynced before the
    // checkpoint completes.
    List<Long> inPlaceFiles = new ArrayList<>();
    List<Long> linked = new ArrayList<>();
    long uploadedBytes = 0;
    // Numbers of files written after the seal are above this, so a restore numbers new files after
    // every file of the snapshot.
    long nextFile = db.versionSet().newFileNumber();
    for (int fam = 0; fam < v.trees().size(); fam++) {
      Tree t = v.tree(fam);
      for (int level = 0; level < t.levelCount(); level++) {
        for (FileMeta f : t.level(level)) {
          String name = String.format("%06d.sst", f.number());
          StreamStateHandle h = confirmed.get(CheckpointFiles.identity(name, f.size()));
          StreamStateHandle sent;
          if (h != null) {
            sent = Placeholders.of(h);
          } else if (inPlace != null && inPlace.inPlace(f.number())) {
            h = inPlace.handle(f.number(), false, f.size(), taken);
            sent = h;
            inPlaceFiles.add(f.number());
          } else {
            h =
                upload(
                    db.versionSet().tableFile(f.number()),
                    f.size(),
                    streamFactory,
                    scope,
                    registry,
                    f.number(),
                    linked);
            sent = h;
            uploaded.add(h);
            uploadedBytes += f.size();
          }
          handed.put(CheckpointFiles.identity(name, f.size()), h);
          numbers.add(f.number());
          shared.add(HandleAndLocalPath.of(sent, name));
          manifestFiles.add(
              SnapshotFile.table(fam, level, f.number(), f.size(), f.properties(), name));
        }
      }
    }
    for (ValueLogFile f : v.vlogFiles().values()) {
      String name = String.format("%06d.vlog", f.number());
      StreamStateHandle h = confirmed.get(CheckpointFiles.identity(name, f.size()));
      StreamStateHandle sent;
      if (h != null) {
        sent = Placeholders.of(h);
      } else if (inPlace != null && inPlace.inPlace(f.number())) {
        h = inPlace.handle(f.number(), true, f.size(), taken);
        sent = h;
        inPlaceFiles.add(f.number());
      } else {
        h =
            upload(
                db.versionSet().vlogFile(f.number()),
                f.size(),
                streamFactory,
                scope,
                registry,
                f.number(),
                linked);
        sent = h;
        uploaded.add(h);
        uploadedBytes += f.size();
      }
      handed.put(CheckpointFiles.identity(name, f.size()), h);
      numbers.add(f.number());
      shared.add(HandleAndLocalPath.of(sent, name));
      manifestFiles.add(SnapshotFile.vlog(f.number(), f.size(), f.entries(), name));
    }
    syncInPlace(db, inPlaceFiles, linked, streamFactory);
    ShardSnapshot shard =
        new ShardSnapshot(
            shardId(),
            Math.max(1, checkpointId),
            timestamp,
            db.config().totalBuckets(),
            resources.ranges,
            resources.schema,
            nextFile,
            manifestFiles);
    byte[] meta = SnapshotMeta.encode(core.keySerializer, resources.states, shard);
    StreamStateHandle metaHandle =
        write(meta, streamFactory, CheckpointedStateScope.EXCLUSIVE, registry);
    uploaded.add(metaHandle);
    if (sharing != SharingFilesStrategy.NO_SHARING) {
      files.pending(checkpointId, handed, reuse ? numbers : Collections.emptyList());
    }
    if (inPlace != null) {
      inPlace.handedOver(taken, checkpointId);
    }
    core.metrics.checkpointUploaded(uploadedBytes + metaHandle.getStateSize());
    IncrementalRemoteKeyedStateHandle handle =
        new IncrementalRemoteKeyedStateHandle(
            backendId,
            core.keyGroupRange,
            checkpointId,
            shared,
            Collections.emptyList(),
            metaHandle,
            uploadedBytes + metaHandle.getStateSize());
    return SnapshotResult.of(handle);
  }

  private String shardId() {
    return StagedVolume.shardId(
        core.keyGroupRange.getStartKeyGroup(), core.keyGroupRange.getEndKeyGroup());
  }

  /**
   * Makes the files the checkpoint refers to in place durable before Flink may acknowledge it: the
   * engine fsyncs those it wrote without fsync, and the shared directory's new links are synced.
   */
  private static void syncInPlace(
      Db db, List<Long> inPlaceFiles, List<Long> linked, CheckpointStreamFactory streamFactory)
      throws IOException {
    if (!inPlaceFiles.isEmpty()) {
      db.makeDurable(inPlaceFiles);
    }
    if (!linked.isEmpty()) {
      // Linking happens only into a local shared directory of a file-system location.
      db.makeDurable(linked);
      if (!WINDOWS) {
        URI uri = ((FsCheckpointStorageLocation) streamFactory).getSharedStateDirectory().toUri();
        try (FileChannel dir =
            FileChannel.open(Paths.get(uri.getPath()), StandardOpenOption.READ)) {
          dir.force(true);
        }
      }
    }
  }

  /**
   * Hands one engine file to the checkpoint. When the checkpoint's shared directory is on the same
   * local file system the file is hard-linked there, so nothing is copied (engine files never
   * change once written, and Flink deleting its link later leaves the engine's intact); otherwise
   * it is copied through the stream factory. A linked file's {@code number} goes to {@code linked}.
   */
  private static StreamStateHandle upload(
      DataFile source,
      long size,
      CheckpointStreamFactory factory,
      CheckpointedStateScope scope,
      CloseableRegistry registry,
      long number,
      List<Long> linked)
      throws IOException {
    if (scope == CheckpointedStateScope.SHARED
        && source.isLocal()
        && factory instanceof FsCheckpointStorageLocation) {
      org.apache.flink.core.fs.Path shared =
          ((FsCheckpointStorageLocation) factory).getSharedStateDirectory();
      URI uri = shared.toUri();
      if (uri.getScheme() == null || "file".equals(uri.getScheme())) {
        String name = UUID.randomUUID() + "-" + source.localPath().getFileName();
        java.nio.file.Path target = Paths.get(uri.getPath()).resolve(name);
        try {
          Files.createLink(target, source.localPath());
          linked.add(number);
          return new FileStateHandle(new org.apache.flink.core.fs.Path(shared, name), size);
        } catch (IOException | UnsupportedOperationException e) {
          // Another device, or links not supported: copy below.
        }
      }
    }
    CheckpointStateOutputStream out = factory.createCheckpointStateOutputStream(scope);
    registry.registerCloseable(out);
    try {
      byte[] buf = new byte[(int) Math.min(COPY_BUFFER, Math.max(1, size))];
      if (source.isLocal()) {
        try (InputStream in = Files.newInputStream(source.localPath())) {
          int n;
          while ((n = in.read(buf)) > 0) {
            out.write(buf, 0, n);
          }
        }
      } else {
        try (StorageInput in = source.openRemote(size)) {
          for (long at = 0; at < size; ) {
            int n = (int) Math.min(buf.length, size - at);
            in.readFully(at, buf, 0, n);
            out.write(buf, 0, n);
            at += n;
          }
        }
      }
      if (registry.unregisterCloseable(out)) {
        return out.closeAndGetHandle();
      }
      throw new IOException("the snapshot was cancelled");
    } finally {
      if (registry.unregisterCloseable(out)) {
        IOUtils.closeQuietly(out);
      }
    }
  }

  private static StreamStateHandle write(
      byte[] bytes,
      CheckpointStreamFactory factory,
      CheckpointedStateScope scope,
      CloseableRegistry registry)
      throws IOException {
    CheckpointStateOutputStream out = factory.createCheckpointStateOutputStream(scope);
    registry.registerCloseable(out);
    try {
      out.write(bytes);
      if (registry.unregisterCloseable(out)) {
        return out.closeAndGetHandle();
      }
      throw new IOException("the snapshot was cancelled");
    } finally {
      if (registry.unregisterCloseable(out)) {
        IOUtils.closeQuietly(out);
      }
    }
  }
}
