package io.cobble.flink.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.schema.ColumnSpec;
import java.io.File;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.CheckpointStreamWithResultProvider;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.FullSnapshotAsyncWriter;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyValueStateIterator;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.RegisteredBroadcastStateBackendMetaInfo;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.RegisteredPriorityQueueStateBackendMetaInfo;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.StateMigrationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Canonical savepoints of a Cobble shard written through Flink's own full snapshot writer and
 * imported again: the canonical bytes are the ones Flink's key layout defines (checked against
 * Flink's serialization utilities), an import of a narrowed handle holds exactly the rows of its
 * key groups, unchanged; each metadata error is rejected before anything is written and names what
 * it rejects; a corrupt row fails the import naming state and key group and leaves no database; an
 * import killed in the middle (child JVM) is never taken for a database and the next one starts
 * clean.
 */
class CanonicalSavepointTest {

  private static final int KEY_GROUPS = 128;
  private static final KeyGroupRange ALL = KeyGroupRange.of(0, KEY_GROUPS - 1);

  @TempDir Path tmp;

  // ---- a source shard in Cobble's layout ----

  /** The states of the test shard: String keys, so a String namespace makes keys ambiguous. */
  static List<StateMetaInfoSnapshot> states(TypeSerializer<Long> valueSerializer) {
    List<StateMetaInfoSnapshot> s = new ArrayList<>();
    s.add(kv(StateDescriptor.Type.VALUE, "value", LongSerializer.INSTANCE, valueSerializer));
    s.add(
        kv(
            StateDescriptor.Type.LIST,
            "list",
            LongSerializer.INSTANCE,
            new ListSerializer<>(LongSerializer.INSTANCE)));
    s.add(
        kv(
            StateDescriptor.Type.MAP,
            "map",
            LongSerializer.INSTANCE,
            new MapSerializer<>(LongSerializer.INSTANCE, LongSerializer.INSTANCE)));
    s.add(
        kv(StateDescriptor.Type.REDUCING, "windowed", StringSerializer.INSTANCE, valueSerializer));
    s.add(
        new RegisteredPriorityQueueStateBackendMetaInfo<>("timers", LongSerializer.INSTANCE)
            .snapshot());
    return s;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static StateMetaInfoSnapshot kv(
      StateDescriptor.Type type, String name, TypeSerializer<?> ns, TypeSerializer<?> value) {
    return new RegisteredKeyValueStateBackendMetaInfo(type, name, ns, value).snapshot();
  }

  /** Writes {@code keys} keys into a shard in Cobble's layout, as the state classes do. */
  static Db sourceShard(Path dir, int keys, KeyGroupRange range) throws Exception {
    Db db = Db.open(dir, CobbleRestore.shardConfig(Config.defaults(), KEY_GROUPS, range));
    for (String family : Arrays.asList("value", "map", "windowed")) {
      db.createFamily(
          CobbleKeyedStateCore.stateFamily(family),
          Collections.singletonList(ColumnSpec.of(CobbleKeyedStateCore.VALUE_COLUMN)));
    }
    db.createFamily(
        CobbleKeyedStateCore.stateFamily("list"),
        Collections.singletonList(
            ColumnSpec.merging(CobbleKeyedStateCore.VALUE_COLUMN, "list_append")));
    db.createFamily(
        CobbleKeyedStateCore.queueFamily("timers"),
        Collections.singletonList(ColumnSpec.of(CobbleKeyedStateCore.VALUE_COLUMN)));
    DataOutputSerializer scratch = new DataOutputSerializer(32);
    for (long i = 0; i < keys; i++) {
      String key = "key-" + i;
      int kg = KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS);
      if (!range.contains(kg)) {
        continue;
      }
      db.put(kg, "s:value", rowKey(key, LongSerializer.INSTANCE, 0L, scratch), 0, bytes(i));
      DataOutputSerializer list = new DataOutputSerializer(32);
      for (long e = i; e < i + listLength(i); e++) {
        CobbleListState.appendElement(list, scratch, LongSerializer.INSTANCE, e);
      }
      db.put(
          kg,
          "s:list",
          rowKey(key, LongSerializer.INSTANCE, 0L, scratch),
          0,
          list.getCopyOfBuffer());
      byte[] prefix = rowKey(key, LongSerializer.INSTANCE, 0L, scratch);
      db.put(kg, "s:map", concat(prefix, bytes(1L)), 0, concat(new byte[] {0}, bytes(i)));
      db.put(kg, "s:map", concat(prefix, bytes(2L)), 0, new byte[] {1});
      db.put(
          kg,
          "s:windowed",
          rowKey(key, StringSerializer.INSTANCE, "window-" + (i % 3), scratch),
          0,
          bytes(i * 2));
      db.put(kg, "q:timers", bytes(1000 + i), 0, new byte[0]);
    }
    return db;
  }

  /** Lists of 2 to 42 elements: longer ones outgrow every initial buffer. */
  private static long listLength(long i) {
    return 2 + (i % 5) * 10;
  }

  private static byte[] canonicalList(long i) throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(8);
    for (long e = i; e < i + listLength(i); e++) {
      if (e > i) {
        out.writeByte(',');
      }
      out.write(bytes(e));
    }
    return out.getCopyOfBuffer();
  }

  private static <N> byte[] rowKey(
      String key, TypeSerializer<N> ns, N namespace, DataOutputSerializer scratch)
      throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(32);
    RowKeys.writeSized(out, scratch, StringSerializer.INSTANCE, key);
    RowKeys.writeSized(out, scratch, ns, namespace);
    return out.getCopyOfBuffer();
  }

  private static byte[] bytes(long v) throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(8);
    LongSerializer.INSTANCE.serialize(v, out);
    return out.getCopyOfBuffer();
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] c = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  /**
   * Writes a canonical savepoint of {@code db} with Flink's writer into files under {@code dir}.
   */
  static KeyGroupsStateHandle savepoint(
      Db db, List<StateMetaInfoSnapshot> states, TypeSerializer<String> keys, Path dir)
      throws Exception {
    Files.createDirectories(dir);
    org.apache.flink.core.fs.Path path = org.apache.flink.core.fs.Path.fromLocalFile(dir.toFile());
    FsCheckpointStreamFactory factory =
        new FsCheckpointStreamFactory(path.getFileSystem(), path, path, 0, 4096);
    CanonicalSavepointWriter<String> resources =
        new CanonicalSavepointWriter<>(db, states, ALL, KEY_GROUPS, keys, null);
    FullSnapshotAsyncWriter<String> writer =
        new FullSnapshotAsyncWriter<>(
            SavepointType.savepoint(SavepointFormatType.CANONICAL),
            () ->
                CheckpointStreamWithResultProvider.createSimpleStream(
                    CheckpointedStateScope.EXCLUSIVE, factory),
            resources);
    try {
      SnapshotResult<KeyedStateHandle> result = writer.get(new CloseableRegistry());
      return (KeyGroupsStateHandle) result.getJobManagerOwnedSnapshot();
    } finally {
      resources.release();
    }
  }

  /** Every row of a shard: "kg family" to its (key, value) pairs, as hex, in key order. */
  static Map<String, List<String>> rows(Db db, KeyGroupRange range) {
    Map<String, List<String>> out = new TreeMap<>();
    for (int kg = range.getStartKeyGroup(); kg <= range.getEndKeyGroup(); kg++) {
      for (String family : Arrays.asList("s:value", "s:list", "s:map", "s:windowed", "q:timers")) {
        try (ScanCursor c = db.scan(kg, family, null, null, ScanOptions.defaults())) {
          while (c.hasNext()) {
            Row r = c.next();
            out.computeIfAbsent(kg + " " + family, k -> new ArrayList<>())
                .add(hex(r.key()) + "=" + hex(r.column(0)));
          }
        }
      }
    }
    return out;
  }

  private static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) {
      s.append(String.format("%02x", x));
    }
    return s.toString();
  }

  static CanonicalSavepointImport.Imported importInto(
      KeyGroupsStateHandle handle,
      TypeSerializer<?> keys,
      KeyGroupRange range,
      TimerServiceKind timers,
      Path dbDir)
      throws Exception {
    @SuppressWarnings({"unchecked", "rawtypes"})
    CanonicalSavepointImport.Imported imported =
        CanonicalSavepointImport.importShard(
            Collections.singletonList(handle.getIntersection(range)),
            (TypeSerializer) keys,
            range,
            KEY_GROUPS,
            timers,
            dbDir,
            CobbleRestore.shardConfig(Config.defaults(), KEY_GROUPS, range),
            CanonicalSavepointTest.class.getClassLoader(),
            new CloseableRegistry());
    return imported;
  }

  // ---- layout ----

  @Test
  void theIteratorEmitsFlinksCanonicalKeysAndValues() throws Exception {
    try (Db db = sourceShard(tmp.resolve("source"), 50, ALL)) {
      List<StateMetaInfoSnapshot> states = states(LongSerializer.INSTANCE);
      CanonicalSavepointWriter<String> resources =
          new CanonicalSavepointWriter<>(
              db, states, ALL, KEY_GROUPS, StringSerializer.INSTANCE, null);
      int[] perState = new int[states.size()];
      int lastGroup = -1;
      int lastState = -1;
      try (KeyValueStateIterator it = resources.createKVStateIterator()) {
        for (; it.isValid(); it.next()) {
          assertThat(it.keyGroup()).isGreaterThanOrEqualTo(lastGroup);
          assertThat(it.isNewKeyGroup()).isEqualTo(it.keyGroup() != lastGroup);
          assertThat(it.isNewKeyValueState())
              .isEqualTo(it.keyGroup() != lastGroup || it.kvStateId() != lastState);
          lastGroup = it.keyGroup();
          lastState = it.kvStateId();
          perState[it.kvStateId()]++;
          String name = states.get(it.kvStateId()).getName();
          String key = name.equals("timers") ? timerKey(it.key()) : readKey(it.key());
          long i = Long.parseLong(key.substring("key-".length()));
          int kg = KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS);
          assertThat(it.keyGroup()).isEqualTo(kg);
          DataOutputSerializer expected = new DataOutputSerializer(32);
          CompositeKeySerializationUtils.writeKeyGroup(kg, 1, expected);
          if (name.equals("timers")) {
            expected.write(bytes(1000 + i));
            assertThat(it.key()).isEqualTo(expected.getCopyOfBuffer());
            assertThat(it.value()).isEmpty();
            continue;
          }
          boolean ambiguous = name.equals("windowed");
          CompositeKeySerializationUtils.writeKey(
              key, StringSerializer.INSTANCE, expected, ambiguous);
          if (ambiguous) {
            CompositeKeySerializationUtils.writeNameSpace(
                "window-" + (i % 3), StringSerializer.INSTANCE, expected, true);
            assertThat(it.key()).isEqualTo(expected.getCopyOfBuffer());
            assertThat(it.value()).isEqualTo(bytes(i * 2));
          } else if (name.equals("map")) {
            CompositeKeySerializationUtils.writeNameSpace(
                0L, LongSerializer.INSTANCE, expected, false);
            byte[] prefix = expected.getCopyOfBuffer();
            assertThat(it.key()).startsWith(prefix);
            long userKey =
                LongSerializer.INSTANCE.deserialize(
                    new org.apache.flink.core.memory.DataInputDeserializer(
                        it.key(), prefix.length, 8));
            assertThat(it.value())
                .isEqualTo(userKey == 1 ? concat(new byte[] {0}, bytes(i)) : new byte[] {1});
          } else {
            CompositeKeySerializationUtils.writeNameSpace(
                0L, LongSerializer.INSTANCE, expected, false);
            assertThat(it.key()).isEqualTo(expected.getCopyOfBuffer());
            byte[] value = name.equals("list") ? canonicalList(i) : bytes(i);
            assertThat(it.value()).as(name).isEqualTo(value);
          }
        }
      }
      assertThat(perState).containsExactly(50, 50, 100, 50, 50);
    }
  }

  private static String timerKey(byte[] canonicalKey) throws Exception {
    long element =
        LongSerializer.INSTANCE.deserialize(
            new org.apache.flink.core.memory.DataInputDeserializer(canonicalKey, 1, 8));
    return "key-" + (element - 1000);
  }

  private static String readKey(byte[] canonicalKey) throws Exception {
    org.apache.flink.core.memory.DataInputDeserializer in =
        new org.apache.flink.core.memory.DataInputDeserializer(canonicalKey);
    in.skipBytesToRead(1);
    return StringSerializer.INSTANCE.deserialize(in);
  }

  // ---- round trip ----

  @Test
  void aNarrowedHandleImportsExactlyTheRowsOfItsKeyGroupsUnchanged() throws Exception {
    KeyGroupsStateHandle handle;
    Map<String, List<String>> expectedLow;
    Map<String, List<String>> expectedHigh;
    KeyGroupRange low = KeyGroupRange.of(0, 41);
    KeyGroupRange high = KeyGroupRange.of(42, KEY_GROUPS - 1);
    try (Db db = sourceShard(tmp.resolve("source"), 400, ALL)) {
      handle =
          savepoint(
              db, states(LongSerializer.INSTANCE), StringSerializer.INSTANCE, tmp.resolve("sp"));
      expectedLow = rows(db, low);
      expectedHigh = rows(db, high);
    }
    assertThat(expectedLow).isNotEmpty();
    assertThat(expectedHigh).isNotEmpty();
    CanonicalSavepointImport.Imported a =
        importInto(
            handle, StringSerializer.INSTANCE, low, TimerServiceKind.COBBLE, tmp.resolve("a"));
    CanonicalSavepointImport.Imported b =
        importInto(
            handle, StringSerializer.INSTANCE, high, TimerServiceKind.COBBLE, tmp.resolve("b"));
    try (Db da = a.db;
        Db dbb = b.db) {
      assertThat(rows(da, low)).isEqualTo(expectedLow);
      assertThat(rows(dbb, high)).isEqualTo(expectedHigh);
      assertThat(a.states)
          .extracting(StateMetaInfoSnapshot::getName)
          .containsExactly("value", "list", "map", "windowed", "timers");
      assertThat(CanonicalSavepointImport.isIncomplete(tmp.resolve("a"))).isFalse();
    }
  }

  // ---- preflight ----

  @Test
  void unsupportedKindsAreRejectedBeforeAnythingIsWrittenNamingStateAndKind() throws Exception {
    for (StateDescriptor.Type kind :
        Arrays.asList(StateDescriptor.Type.FOLDING, StateDescriptor.Type.UNKNOWN)) {
      List<StateMetaInfoSnapshot> states = states(LongSerializer.INSTANCE);
      states.add(kv(kind, "odd", LongSerializer.INSTANCE, LongSerializer.INSTANCE));
      assertRejected(
          states,
          StringSerializer.INSTANCE,
          TimerServiceKind.COBBLE,
          "Cannot restore state 'odd' from the canonical savepoint: its kind " + kind.name(),
          kind.name());
    }
  }

  @Test
  void broadcastStateIsRejectedAsNotKeyed() throws Exception {
    List<StateMetaInfoSnapshot> states = states(LongSerializer.INSTANCE);
    states.add(
        new RegisteredBroadcastStateBackendMetaInfo<>(
                "rules",
                OperatorStateHandle.Mode.BROADCAST,
                LongSerializer.INSTANCE,
                LongSerializer.INSTANCE)
            .snapshot());
    assertRejected(
        states,
        StringSerializer.INSTANCE,
        TimerServiceKind.COBBLE,
        "Cannot restore state 'rules' from the canonical savepoint: it is BROADCAST state, not keyed",
        "broadcast");
  }

  @Test
  void anIncompatibleKeySerializerIsRejectedNamingTheRoleAndBothClasses() throws Exception {
    assertRejected(
        states(LongSerializer.INSTANCE),
        IntSerializer.INSTANCE,
        TimerServiceKind.COBBLE,
        "the key serializer of the savepoint's keys is incompatible (canonical: "
            + StringSerializer.StringSerializerSnapshot.class.getName()
            + ", runtime: "
            + IntSerializer.class.getName(),
        "key");
  }

  @Test
  void timersCannotBeImportedIntoHeapTimers() throws Exception {
    assertRejected(
        states(LongSerializer.INSTANCE),
        StringSerializer.INSTANCE,
        TimerServiceKind.HEAP,
        "Cannot restore timers 'timers' from the canonical savepoint with heap timers; set"
            + " 'state.backend.cobble.timer-service.factory' to COBBLE",
        "heap");
  }

  @Test
  void aSerializerRegisteredLaterMustBeCompatibleAsIs() {
    assertThatThrownBy(
            () ->
                SavepointPreflight.requireAsIs(
                    "count",
                    "timer element serializer",
                    org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility
                        .compatibleAfterMigration(),
                    LongSerializer.INSTANCE.snapshotConfiguration(),
                    StringSerializer.INSTANCE,
                    "the savepoint"))
        .isInstanceOf(StateMigrationException.class)
        .hasMessageContaining(
            "Cannot restore state 'count' from the canonical savepoint: the timer element"
                + " serializer of the savepoint requires migration");
  }

  private void assertRejected(
      List<StateMetaInfoSnapshot> states,
      TypeSerializer<?> keys,
      TimerServiceKind timers,
      String message,
      String name)
      throws Exception {
    KeyGroupsStateHandle handle;
    try (Db db = sourceShard(tmp.resolve("source-" + name), 20, ALL)) {
      handle = savepoint(db, states, StringSerializer.INSTANCE, tmp.resolve("sp-" + name));
    }
    Path dbDir = tmp.resolve("target-" + name);
    assertThatThrownBy(() -> importInto(handle, keys, ALL, timers, dbDir))
        .isInstanceOf(StateMigrationException.class)
        .hasMessageContaining(message);
    assertThat(dbDir).as("nothing was written").doesNotExist();
  }

  // ---- corruption ----

  @Test
  void aCorruptValueFailsTheImportNamingStateAndKeyGroupAndLeavesNoDatabase() throws Exception {
    KeyGroupsStateHandle handle;
    String key = "key-7";
    int kg = KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS);
    try (Db db = sourceShard(tmp.resolve("source"), 20, ALL)) {
      // Three bytes where a long's eight belong.
      db.put(
          kg,
          "s:value",
          rowKey(key, LongSerializer.INSTANCE, 0L, new DataOutputSerializer(8)),
          0,
          new byte[] {1, 2, 3});
      handle =
          savepoint(
              db, states(LongSerializer.INSTANCE), StringSerializer.INSTANCE, tmp.resolve("sp"));
    }
    Path dbDir = tmp.resolve("target");
    assertThatThrownBy(
            () ->
                importInto(handle, StringSerializer.INSTANCE, ALL, TimerServiceKind.COBBLE, dbDir))
        .isInstanceOf(StateMigrationException.class)
        .hasMessageContaining(
            "Corrupt canonical savepoint entry of state 'value' in key group " + kg + " ");
    assertThat(dbDir).as("no half-imported database is left").doesNotExist();
  }

  // ---- crash ----

  /** Child JVM: imports the serialized handle into the directory, slowly, until killed. */
  public static void main(String[] args) throws Exception {
    KeyGroupsStateHandle handle;
    try (ObjectInputStream in = new ObjectInputStream(Files.newInputStream(Path.of(args[0])))) {
      handle = (KeyGroupsStateHandle) in.readObject();
    }
    importInto(handle, StringSerializer.INSTANCE, ALL, TimerServiceKind.COBBLE, Path.of(args[1]));
    System.out.println("import finished");
  }

  @Test
  void anImportKilledInTheMiddleIsIncompleteAndTheNextImportStartsClean() throws Exception {
    Path big = tmp.resolve("big.handle");
    try (Db db = sourceShard(tmp.resolve("big-source"), 3000, ALL)) {
      KeyGroupsStateHandle handle =
          savepoint(
              db,
              states(SlowLongSerializer.INSTANCE),
              StringSerializer.INSTANCE,
              tmp.resolve("big"));
      try (ObjectOutputStream out = new ObjectOutputStream(Files.newOutputStream(big))) {
        out.writeObject(handle);
      }
    }
    Path dbDir = tmp.resolve("target");
    Process child =
        new ProcessBuilder(
                System.getProperty("java.home") + File.separator + "bin" + File.separator + "java",
                "-Xmx256m",
                "-D" + SlowLongSerializer.PROGRESS + "=" + dbDir.resolveSibling("target.progress"),
                "-cp",
                System.getProperty("java.class.path"),
                CanonicalSavepointTest.class.getName(),
                big.toString(),
                dbDir.toString())
            .redirectErrorStream(true)
            .redirectOutput(tmp.resolve("child.log").toFile())
            .start();
    try {
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
      while (!SlowLongSerializer.started(dbDir) && System.nanoTime() < deadline) {
        assertThat(child.isAlive()).as("child died on its own: see child.log").isTrue();
        Thread.sleep(10);
      }
      assertThat(SlowLongSerializer.started(dbDir)).as("the child started importing").isTrue();
      assertThat(child.isAlive()).as("the child is still importing").isTrue();
    } finally {
      child.destroyForcibly();
      child.waitFor(1, TimeUnit.MINUTES);
    }
    assertThat(CanonicalSavepointImport.isIncomplete(dbDir))
        .as("the killed import is marked incomplete")
        .isTrue();

    KeyGroupsStateHandle small;
    Map<String, List<String>> expected;
    try (Db db = sourceShard(tmp.resolve("small-source"), 30, ALL)) {
      small =
          savepoint(
              db, states(LongSerializer.INSTANCE), StringSerializer.INSTANCE, tmp.resolve("small"));
      expected = rows(db, ALL);
    }
    CanonicalSavepointImport.Imported again =
        importInto(small, StringSerializer.INSTANCE, ALL, TimerServiceKind.COBBLE, dbDir);
    try (Db db = again.db) {
      assertThat(CanonicalSavepointImport.isIncomplete(dbDir)).isFalse();
      assertThat(rows(db, ALL)).as("only the second import's rows").isEqualTo(expected);
    }
  }
}
