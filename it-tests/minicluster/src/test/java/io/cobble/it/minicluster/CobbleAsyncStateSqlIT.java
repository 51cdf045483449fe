package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.shim.RunningFlink;
import io.cobble.testing.flink.LoopbackMiniCluster;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink SQL on asynchronous state (Flink 2.x, {@code table.exec.async-state.enabled}) with the
 * Cobble state backend: a join and a grouped aggregation checkpoint, fail once after a completed
 * checkpoint, restart from it, and end with exact results. Cobble's own asynchronous backend must
 * have served them: its executor threads are seen while the job runs, which Flink's adaptor around
 * the synchronous backend would never start. For the 2.x lines only (excluded elsewhere). It found
 * that request payloads must be copied when they join a batch (the operators reuse them).
 */
class CobbleAsyncStateSqlIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  private static final long N = 2_000;
  private static final int KEYS = 30;
  private static final String FACTORY = "io.cobble.flink.state.CobbleStateBackendFactory";

  static final AtomicBoolean CHECKPOINTED = new AtomicBoolean();
  static final AtomicBoolean FAILED = new AtomicBoolean();
  static final Set<String> ASYNC_THREADS = ConcurrentHashMap.newKeySet();

  @TempDir Path dir;

  @AfterEach
  void removeCheckpoints() throws Exception {
    StateJobs.removeContents(dir);
  }

  @Test
  void joinAndGroupedAggregationOnAsyncStateRecoverExactlyAfterAFailure() throws Exception {
    CHECKPOINTED.set(false);
    FAILED.set(false);
    ASYNC_THREADS.clear();
    Map<String, String> conf = new HashMap<>();
    conf.put("state.backend.type", FACTORY);
    conf.put(
        ShimLoader.current().checkpointDirKey(RunningFlink.version()),
        dir.resolve("checkpoints").toUri().toString());
    conf.put("execution.checkpointing.interval", "100 ms");
    conf.put("restart-strategy.type", "fixed-delay");
    conf.put("restart-strategy.fixed-delay.attempts", "3");
    conf.put("restart-strategy.fixed-delay.delay", "200 ms");
    conf.put("table.exec.async-state.enabled", "true");
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(conf));
    env.setParallelism(2);
    StreamTableEnvironment tables = StreamTableEnvironment.create(env);
    tables.createTemporaryView(
        "events", env.fromSequence(0, N - 1).map(new FailOnceAfterCheckpoint()));
    tables.createTemporaryView("dims", env.fromSequence(0, KEYS - 1).map(new Dimension()));
    Table result =
        tables.sqlQuery(
            "SELECT d.f1 AS name, COUNT(*) AS cnt, SUM(e.f1) AS total"
                + " FROM events e JOIN dims d ON e.f0 = d.f0 GROUP BY d.f1");

    Map<String, Row> rows = new HashMap<>();
    try (CloseableIterator<Row> it = result.execute().collect()) {
      while (it.hasNext()) {
        Row row = it.next();
        String name = (String) row.getField(0);
        switch (row.getKind()) {
          case INSERT:
          case UPDATE_AFTER:
            rows.put(name, row);
            break;
          default:
            rows.remove(name);
        }
      }
    }

    assertThat(FAILED).as("the injected failure happened after a checkpoint").isTrue();
    assertThat(ASYNC_THREADS)
        .as("Cobble's asynchronous backend served the SQL operators")
        .isNotEmpty();
    assertThat(rows).hasSize(KEYS);
    for (int k = 0; k < KEYS; k++) {
      long count = 0;
      long total = 0;
      for (long v = k; v < N; v += KEYS) {
        count++;
        total += v;
      }
      Row row = rows.get("name-" + k);
      assertThat(row).as("key " + k).isNotNull();
      assertThat(((Number) row.getField(1)).longValue()).as("count of key " + k).isEqualTo(count);
      assertThat(((Number) row.getField(2)).longValue()).as("total of key " + k).isEqualTo(total);
    }
  }

  /**
   * Emits (key, value), slowly; fails once in the second half after a checkpoint completed, and
   * records the Cobble async executor threads it sees (they live in this JVM).
   */
  static final class FailOnceAfterCheckpoint
      implements MapFunction<Long, Tuple2<Long, Long>>, CheckpointListener {
    @Override
    public Tuple2<Long, Long> map(Long v) throws Exception {
      // Slow until a checkpoint completed, so the failure always comes after one.
      Thread.sleep(CHECKPOINTED.get() ? 1 : 5);
      if (v % 50 == 0) {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
          if (t.getName().startsWith("cobble-async-apply-")) {
            ASYNC_THREADS.add(t.getName());
          }
        }
      }
      if (v >= N / 2 && CHECKPOINTED.get() && FAILED.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure at " + v);
      }
      return Tuple2.of(v % KEYS, v);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      CHECKPOINTED.set(true);
    }
  }

  /** (key, name-key). */
  static final class Dimension implements MapFunction<Long, Tuple2<Long, String>> {
    @Override
    public Tuple2<Long, String> map(Long k) {
      return Tuple2.of(k, "name-" + k);
    }
  }
}
