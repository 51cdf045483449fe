package io.cobble.flink.state;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.snapshot.SnapshotRestore;
import io.cobble.storage.file.FileStorage;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.IOUtils;
import org.apache.flink.util.StateMigrationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens the shard of a keyed backend from the handles Flink restores. The same key-group range
 * resumes in place: the checkpoint's files are linked (not copied) when they lie on a local file
 * system and the shard opens reading metadata only. A changed range assembles the shard from the
 * manifests of every handle that overlaps it ({@link ShardAssembler}).
 */
final class CobbleRestore {

  private static final Logger LOG = LoggerFactory.getLogger(CobbleRestore.class);

  static final String DB_DIR = "db";

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

  static Config shardConfig(Config base, int numberOfKeyGroups, KeyGroupRange range) {
    return base.toBuilder()
        .set("total-buckets", numberOfKeyGroups)
        .set("bucket-ranges", range.getStartKeyGroup() + "-" + range.getEndKeyGroup())
        .build();
  }

  static <K> Result restore(
      Collection<KeyedStateHandle> stateHandles,
      TypeSerializer<K> keySerializer,
      KeyGroupRange range,
      int numberOfKeyGroups,
      Path workDir,
      Config baseConfig,
      ClassLoader classLoader,
      CloseableRegistry cancel,
      Function<IncrementalRemoteKeyedStateHandle, StreamStateHandle> metaHandleOf)
      throws Exception {
    Config config = shardConfig(baseConfig, numberOfKeyGroups, range);
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
      Result fresh = new Result(Db.open(dbDir, config), new ArrayList<>(), -1, new HashMap<>());
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
    Result result;
    if (handles.size() == 1 && handles.get(0).getKeyGroupRange().equals(range)) {
      IncrementalRemoteKeyedStateHandle h = handles.get(0);
      Path stage = workDir.resolve("restored");
      Map<String, StreamStateHandle> files = stage(h, stage, cancel);
      FileStorage volume = FileStorage.open(stage, false);
      SnapshotRestore.materialize(dbDir, volume, metas.get(0).shard, config, true);
      Map<String, StreamStateHandle> held = new HashMap<>();
      metas
          .get(0)
          .shard
          .files()
          .forEach(
              f ->
                  held.put(
                      CheckpointFiles.identity(f.volumePath(), f.size()),
                      files.get(f.volumePath())));
      result =
          new Result(
              Db.open(dbDir, config, volume),
              new ArrayList<>(states.values()),
              h.getCheckpointId(),
              held);
    } else {
      Db target = Db.open(dbDir, config);
      try {
        for (int i = 0; i < handles.size(); i++) {
          IncrementalRemoteKeyedStateHandle h = handles.get(i);
          Path stage = workDir.resolve("source-" + i);
          stage(h, stage, cancel);
          ShardAssembler.absorb(
              target,
              range,
              stage,
              workDir.resolve("source-db-" + i),
              metas.get(i).shard,
              shardConfig(baseConfig, numberOfKeyGroups, h.getKeyGroupRange()));
        }
      } catch (Exception | Error e) {
        target.close();
        throw e;
      }
      result = new Result(target, new ArrayList<>(states.values()), -1, new HashMap<>());
    }
    result.keySerializer = restoredKeySerializer;
    LOG.info(
        "Restored Cobble shard for key groups {} from {} handle(s) ({} in place) in {} ms",
        range,
        handles.size(),
        result.checkpointId >= 0 ? "resumed" : "assembled",
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

  /**
   * Puts every file of a handle into {@code dir} under its local name: a hard link when the file
   * lies on a local file system (no data is copied, and Flink deleting its file later leaves the
   * link intact), a copy through the handle otherwise.
   */
  private static Map<String, StreamStateHandle> stage(
      IncrementalRemoteKeyedStateHandle h, Path dir, CloseableRegistry cancel) throws IOException {
    Files.createDirectories(dir);
    Map<String, StreamStateHandle> files = new HashMap<>();
    List<HandleAndLocalPath> all = new ArrayList<>(h.getSharedState());
    all.addAll(h.getPrivateState());
    for (HandleAndLocalPath f : all) {
      Path target = dir.resolve(f.getLocalPath());
      Files.deleteIfExists(target);
      if (!link(f.getHandle(), target)) {
        copy(f.getHandle(), target, cancel);
      }
      files.put(f.getLocalPath(), f.getHandle());
    }
    return files;
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
