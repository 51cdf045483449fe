package io.cobble.flink.table.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.flink.LoopbackMiniCluster;
import io.cobble.testing.metrics.CobbleMetricsReporter;
import io.cobble.testing.table.TestSinkTable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a table gets without options and what it reports, on a MiniCluster with a metric reporter
 * that keeps every Cobble metric: a sink DDL without {@code sink.writer-buffer-memory} and {@code
 * snapshot.retention} buffers 256 MiB per writer and keeps one global snapshot however many it
 * published; the writers' {@code cobble} gauges follow the shard while it runs (flushes, a
 * compaction, live files and bytes, memtable bytes, stall time); a lookup join counts its hits and
 * misses.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class SinkDefaultsAndMetricsTest {

  private static final long DEFAULT_BUFFER = 256L << 20;

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER =
      LoopbackMiniCluster.withSlots(
          4,
          Map.of("metrics.reporter.cobble.factory.class", CobbleMetricsReporter.class.getName()));

  @TempDir Path dir;

  @BeforeEach
  void reset() {
    CobbleMetricsReporter.METRICS.clear();
    Paced.STOP.set(false);
  }

  @Test
  void defaultsAndTheWritersGaugesWhileAStreamRuns() throws Exception {
    Path table = dir.resolve("defaults");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    env.enableCheckpointing(100);
    StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
    tEnv.createTemporaryView(
        "feed",
        tEnv.fromDataStream(
            env.fromSequence(0, 2_000_000)
                .setParallelism(1)
                .flatMap(new Paced())
                .setParallelism(1)
                .map(i -> Row.of(i % 5_000, "value-" + i))
                .returns(Types.ROW_NAMED(new String[] {"id", "name"}, Types.LONG, Types.STRING))
                .setParallelism(1)));
    tEnv.executeSql(
        "CREATE TABLE cobble_sink (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('connector' = 'cobble', 'path' = '"
            + table.toUri()
            + "', 'bucket' = '4', 'sink.parallelism' = '2')");
    JobClient job =
        tEnv.executeSql("INSERT INTO cobble_sink SELECT id, name FROM feed").getJobClient().get();

    // Each checkpoint flushes the shard: files pile up in L0 until a compaction merges them.
    boolean sawMemtable = false;
    while (true) {
      assertTrue(!job.getJobStatus().get().isGloballyTerminalState(), "the job ended early");
      sawMemtable |= sum("memtableBytes") > 0;
      if (sawMemtable && sum("flushes") >= 4 && sum("compactions") >= 1 && sum("liveFiles") > 0) {
        break;
      }
      Thread.sleep(50);
    }
    assertTrue(sum("liveBytes") > 0, "live bytes of a shard holding files");
    assertTrue(sum("stallMillis") >= 0);
    assertEquals(List.of(DEFAULT_BUFFER, DEFAULT_BUFFER), values("writerBufferBytes"));
    Paced.STOP.set(true);
    job.getJobExecutionResult().get(3, TimeUnit.MINUTES);

    try (Storage storage = StorageProviders.open(table.toUri(), StorageOptions.empty())) {
      SnapshotStore store = new SnapshotStore(storage);
      long current = store.requireCurrentGlobalId();
      // Flushes are counted per shard and a checkpoint's commit may still be pending when the
      // loop above ends, so only "more than one was published" is certain here.
      assertTrue(current >= 2, "global snapshots published: " + current);
      assertEquals(List.of(current), store.globalIds(), "snapshot.retention defaults to 1");
    }
  }

  @Test
  void lookupsCountHitsAndMisses() throws Exception {
    RowType rowType =
        RowType.of(
            new LogicalType[] {new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
            new String[] {"id", "name"});
    Path root = dir.resolve("dim");
    try (TestSinkTable table =
        new TestSinkTable(root, dir.resolve("dim-work"), rowType, List.of("id"), 4, 2, 0)) {
      for (long id = 1; id <= 100; id++) {
        table.upsert(id, StringData.fromString("d" + id));
      }
      table.commit();
    }
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    env.getConfig().getConfiguration().setString("parallelism.default", "1");
    env.executeSql(
        "CREATE TABLE dim (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH"
            + " ('connector' = 'cobble', 'path' = '"
            + root.toUri()
            + "')");
    Map<Long, String> joined = new TreeMap<>();
    try (CloseableIterator<Row> rows =
        env.executeSql(
                "SELECT p.id, d.name FROM (SELECT id, PROCTIME() AS pt FROM (VALUES"
                    + " (CAST(1 AS BIGINT)), (CAST(2 AS BIGINT)), (CAST(3 AS BIGINT)),"
                    + " (CAST(500 AS BIGINT)), (CAST(501 AS BIGINT))) AS v(id)) AS p"
                    + " LEFT JOIN dim FOR SYSTEM_TIME AS OF p.pt AS d ON p.id = d.id")
            .collect()) {
      rows.forEachRemaining(row -> joined.put((Long) row.getField(0), (String) row.getField(1)));
    }
    Map<Long, String> expected = new TreeMap<>();
    expected.put(1L, "d1");
    expected.put(2L, "d2");
    expected.put(3L, "d3");
    expected.put(500L, null);
    expected.put(501L, null);
    assertEquals(expected, joined);
    assertEquals(3, sum("lookupHits"));
    assertEquals(2, sum("lookupMisses"));
  }

  /** The sum over every registered Cobble metric of that name (gauges read now). */
  private static long sum(String name) {
    long sum = 0;
    for (long value : values(name)) {
      sum += value;
    }
    return sum;
  }

  private static List<Long> values(String name) {
    List<Long> values = new ArrayList<>();
    for (Map.Entry<String, Metric> e : CobbleMetricsReporter.METRICS.entrySet()) {
      if (e.getKey().endsWith(".cobble." + name)) {
        Metric metric = e.getValue();
        values.add(
            metric instanceof Counter
                ? ((Counter) metric).getCount()
                : ((Number) ((Gauge<?>) metric).getValue()).longValue());
      }
    }
    return values;
  }

  /** Emits a row per millisecond until told to stop, then drops the rest of the sequence. */
  static final class Paced extends RichFlatMapFunction<Long, Long> {
    static final AtomicBoolean STOP = new AtomicBoolean();

    @Override
    public void flatMap(Long i, Collector<Long> out) throws Exception {
      if (!STOP.get()) {
        Thread.sleep(1);
        out.collect(i);
      }
    }
  }
}
