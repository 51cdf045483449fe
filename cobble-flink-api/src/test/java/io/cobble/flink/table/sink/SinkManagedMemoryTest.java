package io.cobble.flink.table.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.testing.flink.LoopbackMiniCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sink.use-managed-memory-allocator} on a MiniCluster whose TaskManager has 64 MiB of
 * managed memory in two slots: a writer that declares managed memory buffers exactly its slot's
 * share (it is the slot's only managed memory consumer, so 32 MiB) whatever {@code
 * sink.writer-buffer-memory} says, reserves it, and gives it back when it closes; without the
 * option the configured buffer applies. The budget is read from each writer's {@code
 * cobble.writerBufferBytes} gauge through a metric reporter.
 */
class SinkManagedMemoryTest {

  private static final long SLOT_MANAGED = 32L << 20;
  private static final int BUCKETS = 8;

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER =
      LoopbackMiniCluster.withSlots(
          2,
          Map.of(
              "taskmanager.memory.managed.size",
              "64m",
              "metrics.reporter.budget.factory.class",
              BudgetReporter.class.getName()));

  @TempDir Path dir;

  @BeforeEach
  void clearBudgets() {
    BudgetReporter.BUDGETS.clear();
    FailFirstAttempt.reset();
  }

  @Test
  void aManagedWriterBuffersItsSlotShare() throws Exception {
    Path table = dir.resolve("managed");
    run(table, 1000, "true", false);
    assertEquals(List.of(SLOT_MANAGED, SLOT_MANAGED), budgets());
    assertEquals(1000, SinkExactlyOnceTest.read(table).size());
  }

  @Test
  void withoutTheOptionTheConfiguredBufferApplies() throws Exception {
    Path table = dir.resolve("configured");
    run(table, 1000, "false", false);
    assertEquals(List.of(1L << 20, 1L << 20), budgets());
    assertEquals(1000, SinkExactlyOnceTest.read(table).size());
  }

  /**
   * Each writer takes its slot's whole managed memory, so the restarted writers can only reserve
   * theirs if the failed ones gave it back when they closed.
   */
  @Test
  void aClosedWriterReleasesItsShareForTheRestartedOne() throws Exception {
    Path table = dir.resolve("restarted");
    run(table, 1000, "true", true);
    assertTrue(FailFirstAttempt.failed, "the failure was never injected");
    assertEquals(List.of(SLOT_MANAGED, SLOT_MANAGED, SLOT_MANAGED, SLOT_MANAGED), budgets());
    assertEquals(1000, SinkExactlyOnceTest.read(table).size());
  }

  private static List<Long> budgets() {
    List<Long> budgets = new ArrayList<>(BudgetReporter.BUDGETS);
    budgets.sort(null);
    return budgets;
  }

  private void run(Path table, long rows, String managed, boolean failOnce) throws Exception {
    Configuration conf = new Configuration();
    conf.setString("restart-strategy.type", "fixed-delay");
    conf.setString("restart-strategy.fixed-delay.attempts", "2");
    conf.setString("restart-strategy.fixed-delay.delay", "200 ms");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    DataStream<Long> ids = env.fromSequence(0, rows - 1).setParallelism(1);
    if (failOnce) {
      ids = ids.map(new FailFirstAttempt()).setParallelism(1);
    }
    DataStream<Row> inserts =
        ids.map(i -> Row.of(i, "v" + i))
            .returns(Types.ROW_NAMED(new String[] {"id", "name"}, Types.LONG, Types.STRING))
            .setParallelism(1);
    StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
    tEnv.createTemporaryView("inserts", tEnv.fromDataStream(inserts));
    tEnv.executeSql(
        "CREATE TABLE cobble_sink (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('connector' = 'cobble', 'path' = '"
            + table.toUri()
            + "', 'bucket' = '"
            + BUCKETS
            + "', 'sink.parallelism' = '2', 'sink.writer-buffer-memory' = '1mb',"
            + " 'sink.use-managed-memory-allocator' = '"
            + managed
            + "')");
    tEnv.executeSql("INSERT INTO cobble_sink SELECT id, name FROM inserts")
        .await(3, TimeUnit.MINUTES);
  }

  /**
   * Fails the first attempt half-way, once both writers are running. It waits for them at record
   * 200: on a loaded machine the writers' set-up may take longer than this task needs for the whole
   * input, which then ended without the failure. Only this task's thread waits, not the writers'.
   */
  static final class FailFirstAttempt extends RichMapFunction<Long, Long> {
    static volatile boolean failed;

    static void reset() {
      failed = false;
    }

    @Override
    public Long map(Long i) throws Exception {
      if (getRuntimeContext().getAttemptNumber() == 0) {
        Thread.sleep(1);
        if (i == 200) {
          long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
          while (BudgetReporter.BUDGETS.size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(10);
          }
          if (BudgetReporter.BUDGETS.size() == 2) {
            failed = true;
            throw new IllegalStateException("injected failure at " + i);
          }
        }
      }
      return i;
    }
  }

  /** Records every sink writer's {@code writerBufferBytes} gauge when it is registered. */
  public static final class BudgetReporter implements MetricReporter, MetricReporterFactory {
    static final List<Long> BUDGETS = new CopyOnWriteArrayList<>();

    @Override
    public MetricReporter createMetricReporter(Properties properties) {
      return new BudgetReporter();
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
      if ("writerBufferBytes".equals(name)) {
        BUDGETS.add((Long) ((Gauge<?>) metric).getValue());
      }
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {}
  }
}
