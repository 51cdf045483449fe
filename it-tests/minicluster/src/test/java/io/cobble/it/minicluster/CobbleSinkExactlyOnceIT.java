package io.cobble.it.minicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.reader.Reader;
import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.flink.LoopbackMiniCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Exactly-once of the Cobble SQL sink on this line's MiniCluster, judged by what readers can see: a
 * checkpointed streaming job writes a changelog of running counters (the n-th change of a key
 * writes {@code n}, every seventh deletes the key), its task fails once after two completed
 * checkpoints and the job restarts from the last one. The table keeps every global snapshot, and
 * each one that was ever published must equal the table after exactly the prefix of the input that
 * its (completed) checkpoint had consumed: a sink that published early, mixed checkpoints or let a
 * failed attempt's rows through shows a counter of another prefix or a mix of prefixes. The last
 * snapshot (end of input) holds the whole changelog.
 */
class CobbleSinkExactlyOnceIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  private static final Path DATA =
      Paths.get(System.getProperty("cobble.it.dataDir", "target/cobble-data"));

  private static final int BUCKETS = 8;
  private static final int KEYS = 40;
  private static final long CHANGES = 3000;

  private static final RowType ROW_TYPE =
      RowType.of(
          new LogicalType[] {new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
          new String[] {"id", "name"});

  private static long keyOf(long i) {
    return i % KEYS;
  }

  /** How many changes of its key came before change {@code i}: the key's running counter. */
  private static long counterOf(long i) {
    return i / KEYS;
  }

  private static boolean deletes(long i) {
    return counterOf(i) % 7 == 6;
  }

  private static org.apache.flink.types.Row change(long i) {
    return deletes(i)
        ? org.apache.flink.types.Row.ofKind(RowKind.DELETE, keyOf(i), null)
        : org.apache.flink.types.Row.ofKind(RowKind.UPDATE_AFTER, keyOf(i), "n" + counterOf(i));
  }

  /** The table after the first {@code prefix} changes. */
  static Map<Long, String> tableAfter(long prefix) {
    Map<Long, String> rows = new TreeMap<>();
    for (long i = 0; i < prefix; i++) {
      if (deletes(i)) {
        rows.remove(keyOf(i));
      } else {
        rows.put(keyOf(i), "n" + counterOf(i));
      }
    }
    return rows;
  }

  /**
   * Records how many changes each checkpoint's barrier came after, which checkpoints completed, and
   * fails the task once after two completed checkpoints. Until it has failed, the second half of
   * the input is slowed down, so the two checkpoints it waits for always come, however slow the
   * machine, and the failure always lands mid-stream.
   */
  static final class FailOnce extends RichFlatMapFunction<Long, Long>
      implements CheckpointListener, CheckpointedFunction {
    static final AtomicBoolean FAILED = new AtomicBoolean();
    static final Map<Long, Long> PREFIX_AT_CHECKPOINT = new ConcurrentHashMap<>();
    static final Set<Long> COMPLETED = ConcurrentHashMap.newKeySet();

    /** The newest checkpoint that had completed when the failure was injected. */
    static final AtomicLong LAST_BEFORE_FAILURE = new AtomicLong();

    private transient ListState<Long> prefixState;
    private long prefix;
    private int completed;

    @Override
    public void flatMap(Long i, Collector<Long> out) throws Exception {
      if (i != prefix) {
        throw new IllegalStateException("change " + i + " arrived after " + prefix + " changes");
      }
      Thread.sleep(1);
      if (i >= CHANGES / 2 && !FAILED.get()) {
        if (completed >= 2) {
          FAILED.set(true);
          LAST_BEFORE_FAILURE.set(Collections.max(COMPLETED));
          throw new IllegalStateException("injected failure at change " + i);
        }
        Thread.sleep(20);
      }
      prefix++;
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
      // A restored checkpoint completed, even if this task missed its notification.
      context.getRestoredCheckpointId().ifPresent(COMPLETED::add);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      COMPLETED.add(checkpointId);
      completed++;
    }
  }

  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  void everyPublishedSnapshotIsTheTableAtACompletedCheckpoint() throws Exception {
    Path table = DATA.resolve("sink-exactly-once").toAbsolutePath();
    // Every global snapshot on the table is judged: none may be left from an earlier run.
    deleteTree(table);
    Map<String, String> conf = new HashMap<>();
    conf.put("restart-strategy.type", "fixed-delay");
    conf.put("restart-strategy.fixed-delay.attempts", "3");
    conf.put("restart-strategy.fixed-delay.delay", "200 ms");
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(conf));
    env.setParallelism(2);
    env.enableCheckpointing(100);
    StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
    tEnv.createTemporaryView(
        "changes",
        tEnv.fromChangelogStream(
            env.fromSequence(0, CHANGES - 1)
                .setParallelism(1)
                .flatMap(new FailOnce())
                .setParallelism(1)
                .map(CobbleSinkExactlyOnceIT::change)
                .returns(Types.ROW_NAMED(new String[] {"id", "name"}, Types.LONG, Types.STRING))
                .setParallelism(1),
            Schema.newBuilder()
                .column("id", "BIGINT NOT NULL")
                .column("name", "STRING")
                .primaryKey("id")
                .build(),
            ChangelogMode.upsert()));
    tEnv.executeSql(
        "CREATE TABLE cobble_sink (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH"
            + " ('connector' = 'cobble', 'path' = '"
            + table.toUri()
            + "', 'bucket' = '"
            + BUCKETS
            + "', 'sink.parallelism' = '3', 'sink.writer-buffer-memory' = '1mb',"
            + " 'snapshot.retention' = '100000')");
    tEnv.executeSql("INSERT INTO cobble_sink SELECT id, name FROM changes")
        .await(8, TimeUnit.MINUTES);
    assertTrue(FailOnce.FAILED.get(), "the failure was never injected");

    List<GlobalSnapshot> published = new ArrayList<>();
    try (Storage storage = StorageProviders.open(table.toUri(), StorageOptions.empty())) {
      SnapshotStore store = new SnapshotStore(storage);
      for (long id : store.globalIds()) {
        published.add(store.requireGlobal(id));
      }
    }
    GlobalSnapshot last = published.get(published.size() - 1);
    assertEquals(tableAfter(CHANGES), read(table, last.id()), "the end-of-input snapshot");
    long beforeFailure = 0;
    for (GlobalSnapshot global : published.subList(0, published.size() - 1)) {
      long checkpoint = global.checkpointId();
      assertTrue(
          FailOnce.COMPLETED.contains(checkpoint),
          "global snapshot "
              + global.id()
              + " is of checkpoint "
              + checkpoint
              + ", which never completed; completed: "
              + new TreeSet<>(FailOnce.COMPLETED));
      Long prefix = FailOnce.PREFIX_AT_CHECKPOINT.get(checkpoint);
      assertNotNull(prefix, "checkpoint " + checkpoint + " never passed the source");
      assertEquals(
          tableAfter(prefix),
          read(table, global.id()),
          "global snapshot "
              + global.id()
              + " of checkpoint "
              + checkpoint
              + " (after "
              + prefix
              + " changes)");
      if (checkpoint <= FailOnce.LAST_BEFORE_FAILURE.get()) {
        beforeFailure++;
      }
    }
    // Not vacuous: readers saw the table mid-stream before the failure, and again after it.
    assertTrue(beforeFailure > 0, "no global snapshot before the failure: " + published.size());
    assertTrue(published.size() > beforeFailure + 1, "no global snapshot after the restart");
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }

  private static Map<Long, String> read(Path table, long globalId) throws Exception {
    RowCodec codec = new RowCodec(ROW_TYPE, new int[] {0});
    Map<Long, String> rows = new TreeMap<>();
    try (Storage storage = StorageProviders.open(table.toUri(), StorageOptions.empty());
        Reader reader =
            Reader.open(
                storage, globalId, Config.builder().set("total-buckets", BUCKETS).build())) {
      for (int bucket = 0; bucket < BUCKETS; bucket++) {
        try (ScanCursor cursor =
            reader.scan(bucket, TableLayout.FAMILY, null, null, ScanOptions.DEFAULT)) {
          while (cursor.hasNext()) {
            Row stored = cursor.next();
            RowData row = codec.decode(stored.key(), stored.columns());
            String previous = rows.put(row.getLong(0), row.getString(1).toString());
            assertEquals(null, previous, "key " + row.getLong(0) + " stored twice");
          }
        }
      }
    }
    return rows;
  }
}
