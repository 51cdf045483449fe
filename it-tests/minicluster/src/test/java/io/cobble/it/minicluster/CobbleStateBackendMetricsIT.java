package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.shim.FlinkLineShim;
import io.cobble.flink.shim.RunningFlink;
import io.cobble.testing.flink.LoopbackMiniCluster;
import io.cobble.testing.metrics.CobbleMetricsReporter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state backend's engine gauges in the operator's metric group, seen by a metric reporter while
 * a keyed job checkpoints: memory (the budget is the slot's managed-memory share), level-0 and live
 * files, pending compaction bytes, write stalls and the bytes checkpoints handed over. (The
 * reservation itself is checked against a real memory manager in the line modules' tests.)
 */
class CobbleStateBackendMetricsIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER =
      LoopbackMiniCluster.withSlots(
          2,
          Collections.singletonMap(
              "metrics.reporter.cobblestate.factory.class", CobbleMetricsReporter.class.getName()));

  private static final String FACTORY = "io.cobble.flink.state.CobbleStateBackendFactory";
  private static final String[] ENGINE_GAUGES = {
    "memoryBudgetBytes",
    "memtableBytes",
    "immutableMemtables",
    "blockCacheUsageBytes",
    "blockCacheCapacityBytes",
    "blockCacheHits",
    "blockCacheMisses",
    "l0Files",
    "liveFiles",
    "liveBytes",
    "pendingCompactionBytes",
    "writeStalls",
    "writeStallMillis",
    "compactions",
    "checkpointUploadBytesTotal",
    "lastCheckpointUploadBytes"
  };

  @TempDir Path dir;

  @Test
  void engineGaugesWhileAKeyedJobCheckpoints() throws Exception {
    CobbleMetricsReporter.METRICS.clear();
    FlinkLineShim shim = ShimLoader.current();
    Map<String, String> conf = new HashMap<>();
    conf.put("state.backend.type", FACTORY);
    conf.put(
        shim.checkpointDirKey(RunningFlink.version()),
        dir.resolve("checkpoints").toUri().toString());
    conf.put("execution.checkpointing.interval", "100 ms");
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(conf));
    env.setParallelism(1);
    env.fromSequence(0, Long.MAX_VALUE)
        .map(new Paced())
        .keyBy(v -> v % 1_000)
        .map(new Count())
        .sinkTo(ShimLoader.current().<Long>discardingSink());
    JobClient job = env.executeAsync("cobble-state-metrics");
    try {
      // Generous: under heavy load the job once needed more than 2 minutes to get there.
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
      boolean sawMemtable = false;
      while (true) {
        assertThat(job.getJobStatus().get().isGloballyTerminalState())
            .as("the job ended early")
            .isFalse();
        sawMemtable |= value("cobble.memtableBytes") > 0;
        if (sawMemtable
            && value("cobble.checkpointUploadBytesTotal") > 0
            && value("cobble.liveFiles") > 0) {
          break;
        }
        assertThat(System.nanoTime() < deadline)
            .as(
                "gauges within 5 minutes: memtable seen %s, metrics %s",
                sawMemtable, CobbleMetricsReporter.METRICS.keySet())
            .isTrue();
        Thread.sleep(50);
      }
      for (String name : ENGINE_GAUGES) {
        assertThat(find("cobble." + name)).as(name).isNotNull();
      }
      long budget = value("cobble.memoryBudgetBytes");
      assertThat(budget).as("the slot's managed-memory share").isPositive();
      assertThat(value("cobble.lastCheckpointUploadBytes")).isPositive();
      assertThat(value("cobble.blockCacheCapacityBytes")).isPositive().isLessThan(budget);
      assertThat(value("cobble.pendingCompactionBytes")).isNotNegative();
      assertThat(value("cobble.writeStalls")).isNotNegative();
      assertThat(value("cobble.l0Files")).isNotNegative();
    } finally {
      JobEnd.cancel(job);
      awaitCheckpointsDiscarded(dir.resolve("checkpoints").resolve(job.getJobID().toString()));
    }
  }

  /**
   * Flink discards a cancelled job's checkpoints on its I/O threads after the job is terminal; the
   * temporary directory's deletion once raced that discard and failed the test ("Failed to delete
   * temp directory ... chk-1").
   */
  private static void awaitCheckpointsDiscarded(Path jobDir) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (Files.isDirectory(jobDir) && System.nanoTime() < deadline) {
      try (Stream<Path> entries = Files.list(jobDir)) {
        if (entries.noneMatch(p -> p.getFileName().toString().startsWith("chk-"))) {
          return;
        }
      } catch (NoSuchFileException vanished) {
        return;
      }
      Thread.sleep(50);
    }
  }

  private static Metric find(String suffix) {
    for (Map.Entry<String, Metric> e : CobbleMetricsReporter.METRICS.entrySet()) {
      if (e.getKey().endsWith("." + suffix)) {
        return e.getValue();
      }
    }
    return null;
  }

  private static long value(String suffix) {
    Metric m = find(suffix);
    if (!(m instanceof Gauge)) {
      return -1;
    }
    Object v = ((Gauge<?>) m).getValue();
    return v instanceof Number ? ((Number) v).longValue() : -1;
  }

  static final class Paced implements MapFunction<Long, Long> {
    @Override
    public Long map(Long value) throws Exception {
      if (value % 50 == 0) {
        Thread.sleep(1);
      }
      return value;
    }
  }

  static final class Count extends RichMapFunction<Long, Long> {
    private transient ValueState<Long> count;

    @Override
    public Long map(Long value) throws Exception {
      // Not open(): its signature differs between Flink 1.x and 2.x, and this test runs on both.
      if (count == null) {
        count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
      }
      Long c = count.value();
      long next = c == null ? 1 : c + 1;
      count.update(next);
      return next;
    }
  }
}
