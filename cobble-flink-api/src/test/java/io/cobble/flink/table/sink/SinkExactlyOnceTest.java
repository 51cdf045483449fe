package io.cobble.flink.table.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CobbleException;
import io.cobble.Config;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.reader.ReadOnlyDb;
import io.cobble.reader.Reader;
import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.flink.LoopbackMiniCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sink's exactly-once contract on a MiniCluster of the Flink this module compiles against:
 * upserts and deletes survive an injected task failure without loss or duplicates, bounded jobs
 * commit at the end of input, retention keeps N global snapshots, a changed writer count keeps
 * every row, and rows a writer has snapshotted stay invisible until their checkpoint completes.
 */
class SinkExactlyOnceTest {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  private static final int BUCKETS = 8;
  private static final Duration WAIT = Duration.ofMinutes(2);

  private static final RowType ROW_TYPE =
      RowType.of(
          new LogicalType[] {new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
          new String[] {"id", "name"});
  private static final RowCodec CODEC = new RowCodec(ROW_TYPE, new int[] {0});

  @TempDir Path dir;

  @BeforeEach
  void resetSwitches() {
    FailOnce.reset();
    HoldAfterB.RELEASE_B.set(false);
    HoldAfterB.RELEASE_CHECKPOINTS.set(false);
  }

  // ------------------------------------------------------------------ the changelog

  /** Key of change {@code i}: 40 keys, so every key changes many times. */
  private static long keyOf(long i) {
    return i % 40;
  }

  /** Every 7th change deletes its key; the others upsert it with a value naming the change. */
  private static boolean deletes(long i) {
    return i % 7 == 6;
  }

  private static org.apache.flink.types.Row change(long i) {
    return deletes(i)
        ? org.apache.flink.types.Row.ofKind(RowKind.DELETE, keyOf(i), null)
        : org.apache.flink.types.Row.ofKind(RowKind.UPDATE_AFTER, keyOf(i), "v" + i);
  }

  /** The table after changes {@code [0, count)}. */
  static Map<Long, String> expectedAfter(long count) {
    Map<Long, String> rows = new TreeMap<>();
    for (long i = 0; i < count; i++) {
      if (deletes(i)) {
        rows.remove(keyOf(i));
      } else {
        rows.put(keyOf(i), "v" + i);
      }
    }
    return rows;
  }

  private static String sinkDdl(Path table, int writers, String extra) {
    return "CREATE TABLE cobble_sink (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED)"
        + " WITH ('connector' = 'cobble', 'path' = '"
        + table.toUri()
        + "', 'bucket' = '"
        + BUCKETS
        + "', 'sink.parallelism' = '"
        + writers
        + "', 'sink.writer-buffer-memory' = '1mb'"
        + extra
        + ")";
  }

  /** Parallelism 2, three restarts 200 ms apart, checkpoints every {@code checkpointMillis}. */
  static StreamExecutionEnvironment streaming(long checkpointMillis) {
    Configuration conf = new Configuration();
    conf.setString("restart-strategy.type", "fixed-delay");
    conf.setString("restart-strategy.fixed-delay.attempts", "3");
    conf.setString("restart-strategy.fixed-delay.delay", "200 ms");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    if (checkpointMillis > 0) {
      env.enableCheckpointing(checkpointMillis);
    }
    return env;
  }

  /** Registers {@code changes} (an upsert changelog keyed by id) as view {@code changes}. */
  static StreamTableEnvironment withChanges(
      StreamExecutionEnvironment env, DataStream<org.apache.flink.types.Row> changes) {
    StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
    tEnv.createTemporaryView(
        "changes",
        tEnv.fromChangelogStream(
            changes,
            Schema.newBuilder()
                .column("id", "BIGINT NOT NULL")
                .column("name", "STRING")
                .primaryKey("id")
                .build(),
            ChangelogMode.upsert()));
    return tEnv;
  }

  static DataStream<org.apache.flink.types.Row> paced(
      StreamExecutionEnvironment env, long count, RichFlatMapFunction<Long, Long> step) {
    return env.fromSequence(0, count - 1)
        .setParallelism(1)
        .flatMap(step)
        .setParallelism(1)
        .map(SinkExactlyOnceTest::change)
        .returns(Types.ROW_NAMED(new String[] {"id", "name"}, Types.LONG, Types.STRING))
        .setParallelism(1);
  }

  // ------------------------------------------------------------------ (a) failure

  /**
   * Paces the changelog, records how many changes each checkpoint's barrier followed and which
   * checkpoints completed, and fails the task once after two completed checkpoints. Until then the
   * second half of the input is slowed down, so the two checkpoints always come first, however
   * loaded the machine.
   */
  static final class FailOnce extends RichFlatMapFunction<Long, Long>
      implements CheckpointListener, CheckpointedFunction {
    static final AtomicBoolean FAILED = new AtomicBoolean();
    static final Map<Long, Long> PREFIX_AT_CHECKPOINT = new ConcurrentHashMap<>();
    static final Set<Long> COMPLETED = ConcurrentHashMap.newKeySet();
    private static final long FAIL_FROM = 1500;
    private transient ListState<Long> prefixState;
    private long prefix;
    private int completed;

    static void reset() {
      FAILED.set(false);
      PREFIX_AT_CHECKPOINT.clear();
      COMPLETED.clear();
    }

    @Override
    public void flatMap(Long i, Collector<Long> out) throws Exception {
      Thread.sleep(1);
      if (i >= FAIL_FROM && !FAILED.get()) {
        if (completed >= 2) {
          FAILED.set(true);
          throw new IllegalStateException("injected failure at change " + i);
        }
        Thread.sleep(20);
      }
      prefix = i + 1;
      out.collect(i);
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
      PREFIX_AT_CHECKPOINT.put(context.getCheckpointId(), prefix);
      prefixState.update(Collections.singletonList(prefix));
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
      prefixState =
          context
              .getOperatorStateStore()
              .getListState(new ListStateDescriptor<>("prefix", Types.LONG));
      for (long restored : prefixState.get()) {
        prefix = restored;
      }
      context.getRestoredCheckpointId().ifPresent(COMPLETED::add);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      COMPLETED.add(checkpointId);
      completed++;
    }
  }

  /**
   * Every global snapshot the table ever published (retention keeps them all) is the table after
   * the prefix of the changelog its completed checkpoint had consumed, so no reader could see rows
   * of an unfinished checkpoint or of the failed attempt; the last (end of input) is the whole.
   */
  @Test
  void upsertsAndDeletesSurviveATaskFailureExactlyOnce() throws Exception {
    Path table = dir.resolve("failure");
    long changes = 3000;
    StreamExecutionEnvironment env = streaming(100);
    StreamTableEnvironment tEnv = withChanges(env, paced(env, changes, new FailOnce()));
    tEnv.executeSql(sinkDdl(table, 3, ", 'snapshot.retention' = '100000'"));
    tEnv.executeSql("INSERT INTO cobble_sink SELECT id, name FROM changes")
        .await(3, TimeUnit.MINUTES);
    assertTrue(FailOnce.FAILED.get(), "the failure was never injected");
    assertEquals(expectedAfter(changes), read(table));
    List<Long> globals;
    try (Storage storage = open(table)) {
      SnapshotStore store = new SnapshotStore(storage);
      globals = store.globalIds();
      for (long id : globals.subList(0, globals.size() - 1)) {
        long checkpoint = store.requireGlobal(id).checkpointId();
        assertTrue(FailOnce.COMPLETED.contains(checkpoint), "checkpoint " + checkpoint);
        Long prefix = FailOnce.PREFIX_AT_CHECKPOINT.get(checkpoint);
        assertTrue(prefix != null, "checkpoint " + checkpoint + " never passed the source");
        assertEquals(expectedAfter(prefix), readGlobal(storage, id), "global snapshot " + id);
      }
    }
    assertTrue(globals.size() >= 3, "global snapshots: " + globals);
  }

  private static Map<Long, String> readGlobal(Storage storage, long globalId) throws Exception {
    Map<Long, String> rows = new TreeMap<>();
    try (Reader reader = Reader.open(storage, globalId, readerConfig())) {
      for (int bucket = 0; bucket < BUCKETS; bucket++) {
        try (ScanCursor cursor =
            reader.scan(bucket, TableLayout.FAMILY, null, null, ScanOptions.DEFAULT)) {
          while (cursor.hasNext()) {
            collect(cursor.next(), rows);
          }
        }
      }
    }
    return rows;
  }

  // ------------------------------------------------------------------ (b) bounded, no checkpoints

  @Test
  void boundedJobsCommitAtTheEndOfInputWithoutCheckpoints() throws Exception {
    Path table = dir.resolve("bounded");
    StreamExecutionEnvironment env = streaming(0);
    StreamTableEnvironment tEnv =
        withChanges(
            env,
            env.fromSequence(0, 499)
                .setParallelism(1)
                .map(SinkExactlyOnceTest::change)
                .returns(Types.ROW_NAMED(new String[] {"id", "name"}, Types.LONG, Types.STRING))
                .setParallelism(1));
    tEnv.executeSql(sinkDdl(table, 2, ""));
    tEnv.executeSql("INSERT INTO cobble_sink SELECT id, name FROM changes")
        .await(3, TimeUnit.MINUTES);
    assertEquals(expectedAfter(500), read(table));

    TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    batch.executeSql(sinkDdl(table, 2, ""));
    batch
        .executeSql("INSERT INTO cobble_sink VALUES (CAST(1000 AS BIGINT), 'batch')")
        .await(3, TimeUnit.MINUTES);
    Map<Long, String> expected = expectedAfter(500);
    expected.put(1000L, "batch");
    assertEquals(expected, read(table));
    // Without checkpoints, an end-of-input commit is recorded as checkpoint 1 (the one after none).
    try (Storage storage = open(table)) {
      SnapshotStore store = new SnapshotStore(storage);
      assertEquals(1, store.requireGlobal(store.requireCurrentGlobalId()).checkpointId());
    }
    // Pins live on the volume: a later job releases what earlier ones left, so at most the
    // snapshot the last job's writer could not see committed stays pinned per shard.
    try (Storage storage = StorageProviders.open(table.toUri(), StorageOptions.empty())) {
      for (String shard : new String[] {"g1-0of2", "g1-1of2"}) {
        assertTrue(
            storage.list("pins/" + shard + "/").size() <= 1,
            shard + " pins: " + storage.list("pins/" + shard + "/"));
      }
    }
  }

  // ------------------------------------------------------------------ (c) retention

  @Test
  void retentionKeepsExactlyTheNewestGlobalSnapshotsEachNamedByItsCheckpoint() throws Exception {
    Path table = dir.resolve("retention");
    Pace.COMPLETED.clear();
    StreamExecutionEnvironment env = streaming(100);
    StreamTableEnvironment tEnv = withChanges(env, paced(env, 1500, new Pace()));
    tEnv.executeSql(sinkDdl(table, 2, ", 'snapshot.retention' = '2'"));
    tEnv.executeSql("INSERT INTO cobble_sink SELECT id, name FROM changes")
        .await(3, TimeUnit.MINUTES);
    GlobalSnapshot older;
    GlobalSnapshot newest;
    Map<Long, String> olderRows = new TreeMap<>();
    try (Storage storage = open(table)) {
      SnapshotStore store = new SnapshotStore(storage);
      assertEquals(2, store.globalIds().size(), "global snapshots " + store.globalIds());
      assertTrue(store.globalIds().get(1) > 2, "fewer than 3 commits: " + store.globalIds());
      older = store.requireGlobal(store.globalIds().get(0));
      newest = store.requireGlobal(store.globalIds().get(1));
      try (Reader reader = Reader.open(storage, older.id(), readerConfig())) {
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
          try (ScanCursor cursor =
              reader.scan(bucket, TableLayout.FAMILY, null, null, ScanOptions.DEFAULT)) {
            while (cursor.hasNext()) {
              collect(cursor.next(), olderRows);
            }
          }
        }
      }
    }
    // A commit at a completed checkpoint records that checkpoint; the one at the end of input the
    // id after every checkpoint taken before it.
    assertTrue(
        Pace.COMPLETED.contains(older.checkpointId()),
        older.checkpointId() + " is no completed checkpoint: " + Pace.COMPLETED);
    assertTrue(newest.checkpointId() > older.checkpointId());
    assertEquals(expectedAfter(1500), read(table));

    TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    batch.executeSql(sourceDdl("at_older", table, older.checkpointId()));
    batch.executeSql(sourceDdl("at_newest", table, newest.checkpointId()));
    batch.executeSql(sourceDdl("at_missing", table, 1_000_000));
    assertEquals(olderRows, readSql(batch, "at_older"));
    assertEquals(expectedAfter(1500), readSql(batch, "at_newest"));
    Throwable missing = assertThrows(Exception.class, () -> readSql(batch, "at_missing"));
    String expectedMessage =
        "its retained checkpoint ids are ["
            + older.checkpointId()
            + ", "
            + newest.checkpointId()
            + "]";
    Throwable cause = missing;
    while (cause != null && !String.valueOf(cause.getMessage()).contains(expectedMessage)) {
      cause = cause.getCause();
    }
    assertTrue(cause != null, "no cause says '" + expectedMessage + "': " + missing);
  }

  private static String sourceDdl(String name, Path table, long checkpointId) {
    return "CREATE TABLE "
        + name
        + " (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'cobble',"
        + " 'source.kind' = 'sink', 'scan.mode' = 'batch', 'path' = '"
        + table.toUri()
        + "', 'scan.checkpoint-id' = '"
        + checkpointId
        + "')";
  }

  private static Map<Long, String> readSql(TableEnvironment env, String name) throws Exception {
    Map<Long, String> rows = new TreeMap<>();
    try (CloseableIterator<org.apache.flink.types.Row> it =
        env.executeSql("SELECT id, name FROM " + name).collect()) {
      while (it.hasNext()) {
        org.apache.flink.types.Row row = it.next();
        assertEquals(null, rows.put((Long) row.getField(0), (String) row.getField(1)));
      }
    }
    return rows;
  }

  /**
   * Paces the changelog so that checkpoints complete while it runs; records the completed ones. The
   * last third is slowed down until three checkpoints completed (up to 25 s: writers that start
   * late on a loaded machine may let the first two thirds pass before any checkpoint), so three
   * commits happen however loaded the machine.
   */
  static final class Pace extends RichFlatMapFunction<Long, Long> implements CheckpointListener {
    static final Set<Long> COMPLETED = ConcurrentHashMap.newKeySet();
    private static final long SLOW_FROM = 1000;

    @Override
    public void flatMap(Long i, Collector<Long> out) throws Exception {
      Thread.sleep(i >= SLOW_FROM && COMPLETED.size() < 3 ? 50 : 1);
      out.collect(i);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      COMPLETED.add(checkpointId);
    }
  }

  // ------------------------------------------------------------------ (d) rescale

  @Test
  void aChangedWriterCountKeepsEveryRow() throws Exception {
    Path table = dir.resolve("rescale");
    Map<Long, String> expected = new TreeMap<>();
    int[] writerCounts = {3, 2, 4, 4};
    for (int job = 0; job < writerCounts.length; job++) {
      TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
      batch.executeSql(sinkDdl(table, writerCounts[job], ""));
      StringBuilder values = new StringBuilder();
      for (long id = job * 50L; id < job * 50L + 100; id++) {
        values.append(values.length() == 0 ? "" : ", ");
        values.append("(CAST(").append(id).append(" AS BIGINT), 'j").append(job).append("')");
        expected.put(id, "j" + job);
      }
      batch.executeSql("INSERT INTO cobble_sink VALUES " + values).await(3, TimeUnit.MINUTES);
      assertEquals(expected, read(table), "after job " + job);
    }
    try (Storage storage = open(table)) {
      SnapshotStore store = new SnapshotStore(storage);
      GlobalSnapshot current = store.requireGlobal(store.requireCurrentGlobalId());
      assertEquals(4, current.parts().size());
      assertTrue(current.parts().get(0).shardId().startsWith("g3-"), current.parts().toString());
      // Retention 1: the shards of the earlier writer counts are gone, and every file left on the
      // table root is one a snapshot of the current shards refers to.
      assertEquals(List.of("g3-0of4", "g3-1of4", "g3-2of4", "g3-3of4"), store.shardIds());
      Set<String> referenced = new HashSet<>();
      for (String shard : store.shardIds()) {
        for (long id : store.snapshotIds(shard)) {
          store.require(shard, id).files().forEach(f -> referenced.add(f.volumePath()));
        }
      }
      for (String file : storage.list("data/")) {
        assertTrue(referenced.contains(file), file + " is unreferenced");
      }
    }
  }

  // ------------------------------------------------------------------ (e) visibility

  /**
   * Emits changes {@code [0, 200)} (A), then nothing until the test releases B: changes {@code
   * [200, 400)} at once. The checkpoint after B holds its barrier in this task's snapshot until the
   * test releases it; the barrier has already gone downstream, so the writers snapshot B, but the
   * checkpoint cannot complete.
   */
  static final class HoldAfterB extends RichFlatMapFunction<Long, Long>
      implements CheckpointedFunction {
    static final AtomicBoolean RELEASE_B = new AtomicBoolean();
    static final AtomicBoolean RELEASE_CHECKPOINTS = new AtomicBoolean();
    private boolean emittedB;

    @Override
    public void flatMap(Long i, Collector<Long> out) throws Exception {
      Thread.sleep(1);
      if (i < 200) {
        out.collect(i);
      } else if (!emittedB && RELEASE_B.get()) {
        for (long b = 200; b < 400; b++) {
          out.collect(b);
        }
        emittedB = true;
      }
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
      while (emittedB && !RELEASE_CHECKPOINTS.get()) {
        Thread.sleep(10);
      }
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {}
  }

  @Test
  void snapshotsOfAnIncompleteCheckpointStayInvisible() throws Exception {
    Path table = dir.resolve("visibility");
    StreamExecutionEnvironment env = streaming(100);
    StreamTableEnvironment tEnv =
        withChanges(env, paced(env, Long.MAX_VALUE / 2, new HoldAfterB()));
    tEnv.executeSql(sinkDdl(table, 2, ""));
    JobClient job =
        tEnv.executeSql("INSERT INTO cobble_sink SELECT id, name FROM changes")
            .getJobClient()
            .get();
    try {
      Map<Long, String> a = expectedAfter(200);
      waitFor(table, a::equals);
      HoldAfterB.RELEASE_B.set(true);
      Map<Long, String> ab = expectedAfter(400);
      waitUntilShardSnapshotsHold(table, ab);
      assertEquals(a, read(table), "rows of an incomplete checkpoint are visible");
      HoldAfterB.RELEASE_CHECKPOINTS.set(true);
      waitFor(table, ab::equals);
    } finally {
      HoldAfterB.RELEASE_CHECKPOINTS.set(true);
      if (!job.getJobStatus().get(1, TimeUnit.MINUTES).isGloballyTerminalState()) {
        job.cancel().get(1, TimeUnit.MINUTES);
      }
      // The cancel is only acknowledged: wait until no task writes into the temporary directory
      // that JUnit is about to delete.
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
      while (!job.getJobStatus().get(1, TimeUnit.MINUTES).isGloballyTerminalState()
          && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
    }
  }

  // ------------------------------------------------------------------ reading

  private static Storage open(Path table) throws Exception {
    return StorageProviders.open(table.toUri(), StorageOptions.empty());
  }

  private static Config readerConfig() {
    return Config.builder().set("total-buckets", BUCKETS).build();
  }

  /** The table as a reader of its current global snapshot sees it. */
  static Map<Long, String> read(Path table) throws Exception {
    Map<Long, String> rows = new TreeMap<>();
    try (Storage storage = open(table);
        Reader reader = Reader.open(storage, readerConfig())) {
      for (int bucket = 0; bucket < BUCKETS; bucket++) {
        try (ScanCursor cursor =
            reader.scan(bucket, TableLayout.FAMILY, null, null, ScanOptions.DEFAULT)) {
          while (cursor.hasNext()) {
            collect(cursor.next(), rows);
          }
        }
      }
    }
    return rows;
  }

  private static void collect(Row stored, Map<Long, String> rows) {
    RowData row = CODEC.decode(stored.key(), stored.columns());
    String previous =
        rows.put(row.getLong(0), row.isNullAt(1) ? null : row.getString(1).toString());
    assertEquals(null, previous, "key " + row.getLong(0) + " stored twice");
  }

  private static void waitFor(Path table, Predicate<Map<Long, String>> done) throws Exception {
    long deadline = System.nanoTime() + WAIT.toNanos();
    Object last = null;
    while (System.nanoTime() < deadline) {
      if (Files.exists(table.resolve("global/CURRENT"))) {
        try {
          Map<Long, String> rows = read(table);
          if (done.test(rows)) {
            return;
          }
          last = rows;
        } catch (CobbleException expiredMeanwhile) {
          // Retention expired the global snapshot between reading CURRENT and its shards.
          last = expiredMeanwhile;
        }
      }
      Thread.sleep(50);
    }
    throw new AssertionError("the table never reached the expected rows; last read: " + last);
  }

  /**
   * Waits until the newest snapshots of the current shards (committed or not) hold {@code rows}.
   */
  private static void waitUntilShardSnapshotsHold(Path table, Map<Long, String> rows)
      throws Exception {
    long deadline = System.nanoTime() + WAIT.toNanos();
    Map<Long, String> last = null;
    while (System.nanoTime() < deadline) {
      last = new HashMap<>();
      try (Storage storage = open(table)) {
        readLatestShardSnapshots(storage, last);
      } catch (CobbleException expiredMeanwhile) {
        // A newer shard snapshot replaced the newest one while it was opened: look again.
        continue;
      }
      if (rows.equals(new TreeMap<>(last))) {
        return;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("the writers never snapshotted the rows; last: " + last);
  }

  private static void readLatestShardSnapshots(Storage storage, Map<Long, String> rows) {
    SnapshotStore store = new SnapshotStore(storage);
    for (GlobalSnapshot.Part part : store.requireGlobal(store.requireCurrentGlobalId()).parts()) {
      try (ReadOnlyDb shard = ReadOnlyDb.openLatest(storage, part.shardId(), readerConfig())) {
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
          int owned = bucket;
          if (part.ranges().stream().anyMatch(r -> r.contains(owned))) {
            try (ScanCursor cursor =
                shard.scan(bucket, TableLayout.FAMILY, null, null, ScanOptions.DEFAULT)) {
              while (cursor.hasNext()) {
                collect(cursor.next(), rows);
              }
            }
          }
        }
      }
    }
  }
}
