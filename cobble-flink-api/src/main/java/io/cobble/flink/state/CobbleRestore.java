package io.cobble.flink.state;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.rescale.ShardOpenRequest;
import io.cobble.rescale.ShardOpener;
import io.cobble.snapshot.BucketRange;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import javax.annotation.Nullable;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.IOUtils;
import org.apache.flink.util.StateMigrationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens the shard of a keyed backend from the handles Flink restores, through the engine's {@link
 * ShardOpener}: the handles' files are staged as a snapshot volume ({@link StagedVolume}: linked,
 * not copied, when they lie on a local file system) and the opener resumes in place when the
 * key-group range is one handle's, otherwise cuts and joins the handles' files (rescale) without
 * rewriting them. Either way the shard opens reading metadata only, and its first checkpoint refers
 * to the restored files it still uses by placeholders, so Flink keeps them until compaction has
 * replaced them and no retained checkpoint needs them.
 */
final class CobbleRestore {

  private static final Logger LOG = LoggerFactory.getLogger(CobbleRestore.class);

  static final String DB_DIR = "db";
  static final String VOLUME_DIR = "restored";

  /** The restored shard, its states and the files Flink already holds. */
  static final class Result {
    final Db db;
    final List<StateMetaInfoSnapshot> states;
    final long checkpointId;
    final Map<String, StreamStateHandle> files;

    /** The key serializer to use: reconfigured when the restored one asked for it. */
    Object keySerializer;

    Result(
        Db db,
        List<StateMetaInfoSnapshot> states,
        long checkpointId,
        Map<String, StreamStateHandle> files) {
      this.db = db;
      this.states = states;
      this.checkpointId = checkpointId;
      this.files = files;
    }
  }

  private CobbleRestore() {}

  /**
   * The shard's engine config. Its restore is a scratch restore: the working directory is new for
   * each backend and never reopened after a crash (Flink restores from the checkpoint again and the
   * stale directory is swept), so the restore's local metadata needs no fsync; the restored files
   * are durable in the checkpoint, and what the shard writes later is fsynced as usual. The
   * restored tables' pinned index and filter metadata loads in the background after the open, so a
   * failover waits for the tables' footers and properties only, not for reading metadata that grows
   * with the state. The bucket count covers {@code numberOfKeyGroups} and the range ({@link
   * BucketSpace}).
   */
  static Config shardConfig(Config base, int numberOfKeyGroups, KeyGroupRange range) {
    return base.toBuilder()
        .set("total-buckets", BucketSpace.of(numberOfKeyGroups, range))
        .set("bucket-ranges", range.getStartKeyGroup() + "-" + range.getEndKeyGroup())
        .scratchRestore(true)
        .backgroundMetadata(true)
        .build();
  }

  /**
   * Opens the shard from {@code stateHandles}; with {@code primary} its working files and manifests
   * go there and {@code workDir} only stages and caches them. A checkpoint of the same key-group
   * range then resumes in place ({@link CheckpointPrimary#resumeInPlace}); a rescale copies the
   * restored files onto the primary.
   */
  static <K> Result restore(
      Collection<KeyedStateHandle> stateHandles,
      TypeSerializer<K> keySerializer,
      KeyGroupRange range,
      int numberOfKeyGroups,
      Path workDir,
      Config baseConfig,
      ClassLoader classLoader,
      CloseableRegistry cancel,
      Function<IncrementalRemoteKeyedStateHandle, StreamStateHandle> metaHandleOf,
      @Nullable CheckpointPrimary primary)
      throws Exception {
    List<IncrementalRemoteKeyedStateHandle> handles = new ArrayList<>();
    for (KeyedStateHandle h : stateHandles) {
      if (h == null) {
        continue;
      }
      if (!(h instanceof IncrementalRemoteKeyedStateHandle)) {
        throw new IllegalStateException(
            "The Cobble state backend cannot restore a "
                + h.getClass().getSimpleName()
                + " (a canonical savepoint or another backend's checkpoint); restore from a"
                + " Cobble checkpoint or native savepoint");
      }
      handles.add((IncrementalRemoteKeyedStateHandle) h);
    }
    Path dbDir = workDir.resolve(DB_DIR);
    if (handles.isEmpty()) {
      Config config = shardConfig(baseConfig, numberOfKeyGroups, range);
      Db db = primary == null ? Db.open(dbDir, config) : Db.open(primary.storage(), dbDir, config);
      Result fresh = new Result(db, new ArrayList<>(), -1, new HashMap<>());
      fresh.keySerializer = keySerializer;
      return fresh;
    }
    long started = System.nanoTime();
    List<SnapshotMeta> metas = new ArrayList<>();
    TypeSerializer<K> restoredKeySerializer = keySerializer;
    Map<String, StateMetaInfoSnapshot> states = new LinkedHashMap<>();
    for (IncrementalRemoteKeyedStateHandle h : handles) {
      SnapshotMeta meta = readMeta(metaHandleOf.apply(h), classLoader, cancel);
      restoredKeySerializer = checkKeySerializer(keySerializer, meta);
      for (StateMetaInfoSnapshot s : meta.stateMetaInfos()) {
        states.putIfAbsent(s.getName(), s);
      }
      metas.add(meta);
    }
    int buckets = BucketSpace.restored(numberOfKeyGroups, range, metas);
    Config config = shardConfig(baseConfig, buckets, range);
    BucketRange owned = BucketRange.of(range.getStartKeyGroup(), range.getEndKeyGroup());
    if (primary != null
        && handles.size() == 1
        && handles.get(0).getKeyGroupRange().equals(range)
        && metas.get(0).shard.ranges().equals(List.of(owned))
        && metas.get(0).shard.totalBuckets() == buckets) {
      Map<String, StreamStateHandle> held = new HashMap<>();
      Db db = primary.resumeInPlace(handles.get(0), metas.get(0).shard, dbDir, config, held);
      if (db != null) {
        Result result =
            new Result(
                db, new ArrayList<>(states.values()), handles.get(0).getCheckpointId(), held);
        result.keySerializer = restoredKeySerializer;
        LOG.info(
            "Restored Cobble shard for key groups {} from checkpoint {} in place: {} file(s) read"
                + " where they lie, nothing copied, in {} ms",
            range,
            result.checkpointId,
            held.size(),
            (System.nanoTime() - started) / 1_000_000);
        return result;
      }
      LOG.info(
          "Checkpoint {} holds Cobble files outside a file system; copying them onto {}",
          handles.get(0).getCheckpointId(),
          primary.directory());
    }
    StagedVolume volume = StagedVolume.create(workDir.resolve(VOLUME_DIR), buckets);
    ShardOpenRequest.Builder request =
        ShardOpenRequest.builder(
                volume.storage(),
                dbDir,
                StagedVolume.shardId(range.getStartKeyGroup(), range.getEndKeyGroup()),
                config)
            .range(owned);
    if (primary != null) {
      request.primary(primary.storage());
    }
    long checkpointId = -1;
    for (int i = 0; i < handles.size(); i++) {
      IncrementalRemoteKeyedStateHandle h = handles.get(i);
      request.source(volume.add(h, metas.get(i).shard, List.of(owned), cancel));
      checkpointId = Math.max(checkpointId, h.getCheckpointId());
    }
    ShardOpener.Opened opened = ShardOpener.open(request.build());
    if (primary == null) {
      // A rescale onto the checkpoint primary copies the staged files; a local shard reads them.
      opened.db().versionSet().fileOwnership(volume);
    }
    Result result =
        new Result(
            opened.db(),
            new ArrayList<>(states.values()),
            checkpointId,
            volume.usedBy(opened.db()));
    result.keySerializer = restoredKeySerializer;
    LOG.info(
        "Restored Cobble shard for key groups {} from {} handle(s) of checkpoint {} ({}), using {}"
            + " of their files in place, in {} ms",
        range,
        handles.size(),
        checkpointId,
        opened.plan(),
        result.files.size(),
        (System.nanoTime() - started) / 1_000_000);
    return result;
  }

  /** Checks the key serializer against the restored one; returns the one to use. */
  private static <K> TypeSerializer<K> checkKeySerializer(
      TypeSerializer<K> keySerializer, SnapshotMeta meta) throws StateMigrationException {
    @SuppressWarnings("unchecked")
    org.apache.flink.api.common.typeutils.TypeSerializerSnapshot<K> previous =
        (org.apache.flink.api.common.typeutils.TypeSerializerSnapshot<K>)
            meta.proxy.getKeySerializerSnapshot();
    StateSerializerProvider<K> provider =
        StateSerializerProvider.fromNewRegisteredSerializer(keySerializer);
    TypeSerializerSchemaCompatibility<K> compat =
        provider.setPreviousSerializerSnapshotForRestoredState(previous);
    if (compat.isCompatibleAfterMigration() || compat.isIncompatible()) {
      throw new StateMigrationException(
          "The new key serializer ("
              + keySerializer
              + ") must be compatible with the key serializer of the restored state ("
              + previous
              + ").");
    }
    return provider.currentSchemaSerializer();
  }

  private static SnapshotMeta readMeta(
      StreamStateHandle handle, ClassLoader classLoader, CloseableRegistry cancel)
      throws IOException {
    FSDataInputStream in = handle.openInputStream();
    cancel.registerCloseable(in);
    try {
      return SnapshotMeta.read(in, classLoader, String.valueOf(handle));
    } finally {
      if (cancel.unregisterCloseable(in)) {
        IOUtils.closeQuietly(in);
      }
    }
  }
}
