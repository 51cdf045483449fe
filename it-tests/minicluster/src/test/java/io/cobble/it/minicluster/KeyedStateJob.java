package io.cobble.it.minicluster;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.shim.RunningFlink;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * A small keyed job on the Cobble backend for the checkpoint-storage ITs: the numbers 1..n, keyed
 * by residue, kept in value, list and map state; an event-time timer at the end of the input
 * reports each key's state. Each key's report is a function of the whole input, so a record lost or
 * doubled by a restore shows up. One test at a time: the controls are static because the operators
 * run in the test JVM's MiniCluster.
 */
final class KeyedStateJob {

  static final String FACTORY = "io.cobble.flink.state.CobbleStateBackendFactory";
  static final int KEYS = 24;

  /** Per key: count, list size, list sum, map total. */
  static final Map<Long, long[]> RESULTS = new ConcurrentHashMap<>();

  /** Checkpoints the gate saw completed (it runs once, at parallelism 1). */
  static final AtomicLong COMPLETED = new AtomicLong();

  /** Checkpoints completed after the injected failure. */
  static final AtomicLong COMPLETED_AFTER_FAILURE = new AtomicLong();

  static final AtomicBoolean FAILED = new AtomicBoolean();

  /** Fail once, after a checkpoint completed, past half of the input. */
  static volatile boolean failOnce;

  /** While set, every record waits this long, so the job outlives the checkpoints a test wants. */
  static volatile boolean hold;

  /** Hold the input once the injected failure happened. */
  static volatile boolean holdAfterFailure;

  static volatile int pauseMicros;

  /**
   * When positive: once this many checkpoints completed, the gate stops the input for good (until
   * the job is cancelled) and sets {@link #BLOCKED}. Checkpoints triggered later never pass the
   * gate, so no operator writes state for them.
   */
  static volatile long blockAfterCheckpoints;

  static final AtomicBoolean BLOCKED = new AtomicBoolean();

  /** The last checkpoint whose barrier passed the gate: the last one that may hold state. */
  static final AtomicLong LAST_BARRIER = new AtomicLong(-1);

  private KeyedStateJob() {}

  static void reset() {
    RESULTS.clear();
    COMPLETED.set(0);
    COMPLETED_AFTER_FAILURE.set(0);
    FAILED.set(false);
    failOnce = false;
    hold = false;
    holdAfterFailure = false;
    blockAfterCheckpoints = 0;
    BLOCKED.set(false);
    LAST_BARRIER.set(-1);
    pauseMicros = 0;
  }

  /** The Cobble backend, checkpoints to {@code checkpointDir}, retained on cancellation. */
  static Map<String, String> config(String checkpointDir, String interval) {
    Map<String, String> conf = new HashMap<>();
    conf.put("state.backend.type", FACTORY);
    conf.put(ShimLoader.current().checkpointDirKey(RunningFlink.version()), checkpointDir);
    conf.put("execution.checkpointing.interval", interval);
    conf.put("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
    return conf;
  }

  static void restoreFrom(Map<String, String> conf, String checkpointPointer) {
    conf.put("execution.savepoint.path", checkpointPointer);
    conf.put(ShimLoader.current().recoveryClaimModeKey(RunningFlink.version()), "CLAIM");
  }

  static StreamExecutionEnvironment build(Map<String, String> conf, int parallelism, long n) {
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(conf));
    env.setParallelism(parallelism);
    env.setMaxParallelism(128);
    env.fromSequence(1, n)
        .uid("numbers")
        .setParallelism(1)
        .map(new Gate(n))
        .uid("gate")
        .setParallelism(1)
        .assignTimestampsAndWatermarks(
            WatermarkStrategy.<Long>forMonotonousTimestamps()
                .withTimestampAssigner((value, previous) -> value))
        .uid("timestamps")
        .setParallelism(1)
        .keyBy(new StateJobs.ByKey(KEYS))
        .process(new Counts(n))
        .uid("counts")
        .map(new Record())
        .uid("record")
        .sinkTo(ShimLoader.current().<long[]>discardingSink())
        .uid("discard");
    return env;
  }

  static void assertExactResults(long n) {
    Map<Long, long[]> expected = new HashMap<>();
    for (long v = 1; v <= n; v++) {
      long[] e = expected.computeIfAbsent(v % KEYS, k -> new long[4]);
      e[0]++;
      e[1]++;
      e[2] += v;
      e[3]++;
    }
    StateJobs.assertResults(RESULTS, expected);
  }

  /**
   * Paces the input, holds it (2 ms per record, never blocking, so checkpoint barriers pass) while
   * a test counts checkpoints, fails once when asked: past half of the input, after a checkpoint
   * completed (holding the input, 10 ms per record, until one did).
   */
  static final class Gate
      implements MapFunction<Long, Long>, CheckpointListener, CheckpointedFunction {
    private final long n;
    private long completed;

    Gate(long n) {
      this.n = n;
    }

    @Override
    public Long map(Long value) throws Exception {
      if (blockAfterCheckpoints > 0 && completed >= blockAfterCheckpoints) {
        BLOCKED.set(true);
        // The task's only thread waits here, so no later barrier passes; cancelling interrupts it.
        while (blockAfterCheckpoints > 0) {
          TimeUnit.MILLISECONDS.sleep(5);
        }
      }
      boolean awaitingFirstCheckpoint =
          failOnce && !FAILED.get() && completed == 0 && value > n / 2;
      if (awaitingFirstCheckpoint || (holdAfterFailure && FAILED.get())) {
        // Long enough (100 s over half of 20,000 records) for a loaded machine to deploy the job
        // and complete checkpoints before the input runs out; it ends with the awaited checkpoint.
        TimeUnit.MILLISECONDS.sleep(10);
      } else if (hold) {
        TimeUnit.MILLISECONDS.sleep(2);
      } else if (pauseMicros > 0 && value % 10 == 0) {
        TimeUnit.MICROSECONDS.sleep(pauseMicros * 10L);
      }
      if (failOnce && completed > 0 && value > n / 2 && FAILED.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure at " + value);
      }
      return value;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) {
      LAST_BARRIER.set(context.getCheckpointId());
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {}

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      completed++;
      COMPLETED.incrementAndGet();
      if (FAILED.get()) {
        COMPLETED_AFTER_FAILURE.incrementAndGet();
      }
    }
  }

  /** Value, list and map state per key; an event-time timer at the end reports them. */
  static final class Counts extends KeyedProcessFunction<Long, Long, long[]> {
    private final long n;
    private transient ValueState<Long> count;
    private transient ListState<Long> values;
    private transient MapState<Long, Long> byResidue;

    Counts(long n) {
      this.n = n;
    }

    // Not open(): its signature differs between Flink 1.x and 2.x, and this job runs on both.
    private void init() {
      if (count != null) {
        return;
      }
      count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
      values = getRuntimeContext().getListState(new ListStateDescriptor<>("values", Long.class));
      byResidue =
          getRuntimeContext()
              .getMapState(new MapStateDescriptor<>("by-residue", Long.class, Long.class));
    }

    @Override
    public void processElement(Long value, Context ctx, Collector<long[]> out) throws Exception {
      init();
      Long c = count.value();
      if (c == null) {
        ctx.timerService().registerEventTimeTimer(n + 1);
      }
      count.update(c == null ? 1 : c + 1);
      values.add(value);
      long residue = value % 7;
      Long r = byResidue.get(residue);
      byResidue.put(residue, r == null ? 1 : r + 1);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<long[]> out)
        throws Exception {
      init();
      long size = 0;
      long listSum = 0;
      for (Long v : values.get()) {
        size++;
        listSum += v;
      }
      long mapTotal = 0;
      for (Long m : byResidue.values()) {
        mapTotal += m;
      }
      out.collect(new long[] {ctx.getCurrentKey(), count.value(), size, listSum, mapTotal});
    }
  }

  static final class Record implements MapFunction<long[], long[]> {
    @Override
    public long[] map(long[] result) {
      long[] values = new long[result.length - 1];
      System.arraycopy(result, 1, values, 0, values.length);
      RESULTS.put(result[0], values);
      return result;
    }
  }
}
