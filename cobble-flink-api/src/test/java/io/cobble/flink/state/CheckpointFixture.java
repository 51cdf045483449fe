package io.cobble.flink.state;

import io.cobble.Db;
import io.cobble.schema.ColumnSpec;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import java.io.DataOutputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.RegisteredPriorityQueueStateBackendMetaInfo;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

/**
 * Writes a Flink checkpoint of one operator on the Cobble backend the way the backend lays it out
 * (engine files in {@code shared/}, the Cobble meta file in {@code chk-N/}, Flink's own {@code
 * _metadata}), without a running job: two subtasks (key groups 0-63 and 64-127 of 128), Long keys
 * 0..keys-1 with value state {@code count = key * 10 + base}, list state {@code values = [key, key
 * + base]}, map state {@code seen = {1: key, 2: null}} and a timer queue.
 */
public final class CheckpointFixture {

  public static final int KEY_GROUPS = 128;

  private CheckpointFixture() {}

  public static long count(long key, long base) {
    return key * 10 + base;
  }

  /** Writes {@code chk-<id>} under {@code jobDir}; returns the Cobble meta file of subtask 0. */
  public static Path write(Path jobDir, long id, OperatorID operator, int keys, long base)
      throws Exception {
    Path shared = Files.createDirectories(jobDir.resolve("shared"));
    Path chk = Files.createDirectories(jobDir.resolve("chk-" + id));
    OperatorState state = new OperatorState(operator, 2, KEY_GROUPS);
    Path firstMeta = null;
    KeyGroupRange[] ranges = {KeyGroupRange.of(0, 63), KeyGroupRange.of(64, 127)};
    for (int subtask = 0; subtask < 2; subtask++) {
      Path work = Files.createTempDirectory(jobDir, "work-");
      IncrementalRemoteKeyedStateHandle handle =
          shard(work, shared, chk, id, ranges[subtask], keys, base);
      if (firstMeta == null) {
        firstMeta =
            java.nio.file.Paths.get(
                ((FileStateHandle) handle.getMetaStateHandle()).getFilePath().toUri());
      }
      state.putState(subtask, OperatorSubtaskState.builder().setManagedKeyedState(handle).build());
    }
    writeMetadata(chk, new CheckpointMetadata(id, Collections.singletonList(state), list()));
    return firstMeta;
  }

  /** Writes {@code _metadata} of a checkpoint whose only keyed handle is not Cobble's. */
  public static void writeForeign(Path chk, OperatorID operator) throws Exception {
    Files.createDirectories(chk);
    OperatorState state = new OperatorState(operator, 1, KEY_GROUPS);
    IncrementalRemoteKeyedStateHandle handle =
        new IncrementalRemoteKeyedStateHandle(
            UUID.randomUUID(),
            KeyGroupRange.of(0, KEY_GROUPS - 1),
            1,
            Collections.emptyList(),
            Collections.emptyList(),
            new ByteStreamStateHandle("rocksdb-meta", new byte[] {1, 2, 3, 4, 5, 6, 7, 8}),
            8);
    state.putState(0, OperatorSubtaskState.builder().setManagedKeyedState(handle).build());
    writeMetadata(chk, new CheckpointMetadata(1, Collections.singletonList(state), list()));
  }

  private static <T> List<T> list() {
    return new ArrayList<>();
  }

  private static void writeMetadata(Path chk, CheckpointMetadata metadata) throws Exception {
    try (OutputStream out = Files.newOutputStream(chk.resolve("_metadata"))) {
      Checkpoints.storeCheckpointMetadata(metadata, new DataOutputStream(out));
    }
  }

  private static List<StateMetaInfoSnapshot> states() {
    List<StateMetaInfoSnapshot> s = new ArrayList<>();
    s.add(kv(StateDescriptor.Type.VALUE, "count", LongSerializer.INSTANCE));
    s.add(kv(StateDescriptor.Type.LIST, "values", new ListSerializer<>(LongSerializer.INSTANCE)));
    s.add(
        kv(
            StateDescriptor.Type.MAP,
            "seen",
            new MapSerializer<>(LongSerializer.INSTANCE, LongSerializer.INSTANCE)));
    s.add(
        new RegisteredPriorityQueueStateBackendMetaInfo<>("timers", LongSerializer.INSTANCE)
            .snapshot());
    return s;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static StateMetaInfoSnapshot kv(
      StateDescriptor.Type type, String name, TypeSerializer<?> value) {
    return new RegisteredKeyValueStateBackendMetaInfo(
            type, name, VoidNamespaceSerializer.INSTANCE, value)
        .snapshot();
  }

  private static IncrementalRemoteKeyedStateHandle shard(
      Path work, Path shared, Path chk, long id, KeyGroupRange range, int keys, long base)
      throws Exception {
    List<HandleAndLocalPath> files = new ArrayList<>();
    List<SnapshotFile> manifestFiles = new ArrayList<>();
    long nextFile;
    ShardSnapshot shard;
    try (Db db =
        Db.open(
            work.resolve("db"),
            CobbleRestore.shardConfig(io.cobble.Config.defaults(), KEY_GROUPS, range))) {
      for (String family : new String[] {"count", "seen"}) {
        db.createFamily(
            CobbleKeyedStateCore.stateFamily(family),
            Collections.singletonList(ColumnSpec.of(CobbleKeyedStateCore.VALUE_COLUMN)));
      }
      db.createFamily(
          CobbleKeyedStateCore.stateFamily("values"),
          Collections.singletonList(
              ColumnSpec.merging(CobbleKeyedStateCore.VALUE_COLUMN, "list_append")));
      db.createFamily(
          CobbleKeyedStateCore.queueFamily("timers"),
          Collections.singletonList(ColumnSpec.of(CobbleKeyedStateCore.VALUE_COLUMN)));
      DataOutputSerializer scratch = new DataOutputSerializer(32);
      for (long key = 0; key < keys; key++) {
        int kg = KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS);
        if (!range.contains(kg)) {
          continue;
        }
        byte[] row =
            StateRowFormat.rowKey(
                LongSerializer.INSTANCE,
                key,
                VoidNamespaceSerializer.INSTANCE,
                VoidNamespace.INSTANCE);
        db.put(kg, "s:count", row, 0, longBytes(count(key, base)));
        DataOutputSerializer op = new DataOutputSerializer(16);
        CobbleListState.appendElement(op, scratch, LongSerializer.INSTANCE, key);
        db.merge(kg, "s:values", row, 0, op.getCopyOfBuffer());
        op.clear();
        CobbleListState.appendElement(op, scratch, LongSerializer.INSTANCE, key + base);
        db.merge(kg, "s:values", row, 0, op.getCopyOfBuffer());
        byte[] one = concat(row, longBytes(1));
        db.put(kg, "s:seen", one, 0, concat(new byte[] {0}, longBytes(key)));
        db.put(kg, "s:seen", concat(row, longBytes(2)), 0, new byte[] {1});
        db.put(kg, "q:timers", longBytes(1000 + key), 0, new byte[0]);
      }
      Version v = db.sealForSnapshot().join();
      try {
        for (int fam = 0; fam < v.trees().size(); fam++) {
          Tree t = v.tree(fam);
          for (int level = 0; level < t.levelCount(); level++) {
            for (FileMeta f : t.level(level)) {
              String name = String.format("%06d.sst", f.number());
              Path target = shared.resolve(UUID.randomUUID().toString());
              Files.copy(db.versionSet().tableFile(f.number()).localPath(), target);
              files.add(
                  HandleAndLocalPath.of(
                      new FileStateHandle(
                          new org.apache.flink.core.fs.Path(target.toUri()), f.size()),
                      name));
              manifestFiles.add(
                  SnapshotFile.table(fam, level, f.number(), f.size(), f.properties(), name));
            }
          }
        }
        nextFile = db.versionSet().newFileNumber();
        shard =
            new ShardSnapshot(
                StagedVolume.shardId(range.getStartKeyGroup(), range.getEndKeyGroup()),
                id,
                System.currentTimeMillis(),
                KEY_GROUPS,
                BucketRange.fromPairs(db.ownedBucketRanges()),
                db.schema(),
                nextFile,
                manifestFiles);
      } finally {
        v.unref();
      }
    }
    byte[] meta = SnapshotMeta.encode(LongSerializer.INSTANCE, states(), shard);
    Path metaFile = chk.resolve(UUID.randomUUID().toString());
    Files.write(metaFile, meta);
    return new IncrementalRemoteKeyedStateHandle(
        UUID.randomUUID(),
        range,
        id,
        files,
        Collections.emptyList(),
        new FileStateHandle(new org.apache.flink.core.fs.Path(metaFile.toUri()), meta.length),
        meta.length);
  }

  private static byte[] longBytes(long v) throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(8);
    LongSerializer.INSTANCE.serialize(v, out);
    return out.getCopyOfBuffer();
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
