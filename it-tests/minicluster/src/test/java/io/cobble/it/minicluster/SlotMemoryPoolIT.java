package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.testing.flink.LoopbackMiniCluster;
import io.cobble.testing.metrics.CobbleMetricsReporter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.api.java.typeutils.TupleTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Three keyed operators of one job in one slot, each with its own Cobble backend, share the slot's
 * one memory pool: the pool serves all three, its memtables stay within the budget while the three
 * write far more than it, and every count read back through the shared block cache is exact (the
 * three shards use the same file numbers, so cache keys mixed up between them would show as wrong
 * counts).
 */
class SlotMemoryPoolIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER =
      LoopbackMiniCluster.withSlots(
          1,
          Collections.singletonMap(
              "metrics.reporter.cobblestate.factory.class", CobbleMetricsReporter.class.getName()));

  private static final String FACTORY = "io.cobble.flink.state.CobbleStateBackendFactory";
  private static final long SLOT_BUDGET = 4L << 20;
  // Half of the slot's 4 MB for memtables, in buffers of 1 MB each.
  private static final long MEMTABLE_CAPACITY = 1L << 20;
  private static final long RECORDS = 100_000;
  private static final long[] KEYS = {20_000, 25_000, 30_000};

  @Test
  void keyedOperatorsOfASlotShareOnePoolWithinItsBudget() throws Exception {
    CobbleMetricsReporter.METRICS.clear();
    Map<String, String> conf = new HashMap<>();
    conf.put("state.backend.type", FACTORY);
    conf.put("state.backend.cobble.memory.fixed-per-slot", "4mb");
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(conf));
    env.setParallelism(1);
    List<String> failures = new ArrayList<>();
    long samples = 0;
    long seen = 0;
    long poolBudget = -1;
    try (CloseableIterator<Tuple4<Long, Long, Long, Long>> out =
        // Unbounded, so the backends stay open while the gauges are read; closing the iterator
        // cancels the job.
        env.fromSequence(0, Long.MAX_VALUE)
            .map(v -> Tuple4.of(v, 0L, 0L, 0L))
            .returns(new TupleTypeInfo<>(Types.LONG, Types.LONG, Types.LONG, Types.LONG))
            .keyBy(t -> t.f0 % KEYS[0])
            .map(new Count(1))
            .name("count-1")
            .keyBy(t -> t.f0 % KEYS[1])
            .map(new Count(2))
            .name("count-2")
            .keyBy(t -> t.f0 % KEYS[2])
            .map(new Count(3))
            .name("count-3")
            // Collecting is slow: every 100th record, and every record with a wrong count.
            .filter(t -> t.f0 % 100 == 0 || !exact(t))
            .executeAndCollect("cobble-slot-memory-pool")) {
      long last = -1;
      while (last < RECORDS && out.hasNext()) {
        Tuple4<Long, Long, Long, Long> t = out.next();
        if (!exact(t)) {
          failures.add(t.toString());
        }
        last = t.f0;
        seen++;
        if (seen % 10 == 0) {
          assertThat(all("poolBackends")).as("each backend's pool gauge").hasSize(3);
          samples++;
          for (long backends : all("poolBackends")) {
            assertThat(backends).as("backends on the slot's pool").isEqualTo(3);
          }
          for (long budget : all("memoryBudgetBytes")) {
            assertThat(budget).as("each backend names the slot's budget").isEqualTo(SLOT_BUDGET);
          }
          poolBudget = all("poolMemtableBudgetBytes").get(0);
          long cacheCapacity = all("blockCacheCapacityBytes").get(0);
          assertThat(poolBudget + cacheCapacity).isLessThanOrEqualTo(SLOT_BUDGET);
          // The gauge sums three shards read one after another while their writers go on: a
          // memtable sealed and flushed in between may be seen twice, at most one buffer.
          long memtables = 0;
          for (long used : all("poolMemtableBytes")) {
            assertThat(used)
                .as("the slot's memtables")
                .isLessThanOrEqualTo(poolBudget + MEMTABLE_CAPACITY);
            memtables = Math.max(memtables, used);
          }
          // The cache also holds the write budget the memtables leave idle (lent to it), so it is
          // bounded by the whole budget, and memtables and cache together by the slot's.
          for (long used : all("blockCacheUsageBytes")) {
            assertThat(used)
                .as("the slot's block cache")
                .isLessThanOrEqualTo(cacheCapacity + poolBudget);
            assertThat(memtables + used)
                .as("the slot's memtables and block cache")
                .isLessThanOrEqualTo(SLOT_BUDGET + MEMTABLE_CAPACITY);
          }
        }
      }
      System.out.println(
          "SlotMemoryPoolIT: write stalls "
              + all("writeStalls")
              + ", stall ms "
              + all("writeStallMillis")
              + ", compactions "
              + all("compactions"));
    }
    assertThat(failures).as("records with a wrong count").isEmpty();
    assertThat(seen).isGreaterThanOrEqualTo(RECORDS / 100);
    assertThat(samples).as("gauge samples taken while the job ran").isPositive();
    assertThat(poolBudget).isEqualTo(2 * MEMTABLE_CAPACITY);
  }

  /** One source in order and parallelism 1: the n-th record of a key sees the count n. */
  private static boolean exact(Tuple4<Long, Long, Long, Long> t) {
    long v = t.f0;
    return t.f1 == v / KEYS[0] + 1 && t.f2 == v / KEYS[1] + 1 && t.f3 == v / KEYS[2] + 1;
  }

  /**
   * The values of every registered gauge whose name ends with {@code cobble.<name>} (the operators
   * have names of their own, so each backend's gauges have their own identifier).
   */
  private static List<Long> all(String name) {
    List<Long> values = new ArrayList<>();
    for (Map.Entry<String, Metric> e : CobbleMetricsReporter.METRICS.entrySet()) {
      if (e.getKey().endsWith(".cobble." + name) && e.getValue() instanceof Gauge) {
        Object v = ((Gauge<?>) e.getValue()).getValue();
        if (v instanceof Number) {
          values.add(((Number) v).longValue());
        }
      }
    }
    return values;
  }

  /** Counts the records of each key in Cobble state, into field {@code stage} of the record. */
  static final class Count
      extends RichMapFunction<Tuple4<Long, Long, Long, Long>, Tuple4<Long, Long, Long, Long>> {
    private final int stage;
    private transient ValueState<Long> count;

    Count(int stage) {
      this.stage = stage;
    }

    @Override
    public Tuple4<Long, Long, Long, Long> map(Tuple4<Long, Long, Long, Long> t) throws Exception {
      // Not open(): its signature differs between Flink 1.x and 2.x, and this test runs on both.
      if (count == null) {
        count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
      }
      Long c = count.value();
      long next = c == null ? 1 : c + 1;
      count.update(next);
      t.setField(next, stage);
      return t;
    }
  }
}
