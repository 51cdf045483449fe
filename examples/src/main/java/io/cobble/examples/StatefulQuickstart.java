package io.cobble.examples;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.checkpoint.CheckpointStatsStatus;
import org.apache.flink.runtime.checkpoint.RestoredCheckpointStats;
import org.apache.flink.runtime.checkpoint.TaskStateStats;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;
import org.apache.flink.util.Collector;

/**
 * The state backend part of the quickstart: a keyed event-time aggregation (per key, the sum of
 * each one-second window, emitted by an event-time timer) on the Cobble state backend in a local
 * MiniCluster, with a checkpoint every 200 ms and one forced failure once checkpoint 2 has
 * completed (the second half of the input waits for it). Prints each checkpoint's state size and
 * the bytes it uploaded, and how long the restore took; fails unless a restore happened and every
 * window result equals the sum computed here.
 *
 * <p>Results are checked as they arrive: the print sink is not transactional, so a window may be
 * emitted twice (before the failure and again after the restore), but every emission must carry the
 * exact sum, which a backend that lost or doubled state after the restore would not.
 */
final class StatefulQuickstart {

  private static final long EVENTS = 30_000;
  private static final int KEYS = 10;
  private static final long WINDOW_MS = 1_000;
  private static final long EVENTS_PER_SECOND = 10_000;
  private static final long FAIL_AFTER_CHECKPOINT = 2;
  private static final int CHECKPOINTS_SHOWN = 8;

  /** Window results keyed by "key@windowStart"; wrong sums are collected separately. */
  private static final Map<String, Long> RESULTS = new ConcurrentHashMap<>();

  private static final List<String> WRONG = new java.util.concurrent.CopyOnWriteArrayList<>();
  private static final AtomicBoolean FAILED_ONCE = new AtomicBoolean();
  private static final AtomicLong LAST_COMPLETED_CHECKPOINT = new AtomicLong();

  private StatefulQuickstart() {}

  /** Runs the job; returns normally only when its results are exact. */
  static void run(Path checkpoints) throws Exception {
    Configuration config = new Configuration();
    config.setString("state.backend.type", "io.cobble.flink.state.CobbleStateBackendFactory");
    config.setString("state.checkpoints.dir", checkpoints.toUri().toString());
    config.setString("execution.checkpointing.interval", "200 ms");
    config.setString("restart-strategy.type", "fixed-delay");
    config.setString("restart-strategy.fixed-delay.attempts", "1");
    config.setString("restart-strategy.fixed-delay.delay", "100 ms");
    config.setString("web.checkpoints.history", "1000");
    config.setString("taskmanager.memory.managed.size", "128m");

    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
    env.setParallelism(2);
    env.fromSource(
            new NumberSequenceSource(1, EVENTS),
            WatermarkStrategy.<Long>forMonotonousTimestamps().withTimestampAssigner((v, t) -> v),
            "events")
        // One reader and one split: timestamps stay in order, so no event is ever late.
        .setParallelism(1)
        .map(new Throttle())
        .setParallelism(1)
        .keyBy(v -> v % KEYS, Types.LONG)
        .process(new WindowSum())
        .name("keyed window sum")
        .addSink(new CheckingSink())
        .name("check");
    JobGraph job = env.getStreamGraph().getJobGraph();

    MiniClusterConfiguration cluster =
        new MiniClusterConfiguration.Builder()
            .setConfiguration(config)
            .setNumTaskManagers(1)
            .setNumSlotsPerTaskManager(2)
            .build();
    try (MiniCluster mini = new MiniCluster(cluster)) {
      mini.start();
      long start = System.nanoTime();
      JobID id = mini.submitJob(job).get(1, TimeUnit.MINUTES).getJobID();
      JobResult result = mini.requestJobResult(id).get(5, TimeUnit.MINUTES);
      if (!result.isSuccess()) {
        throw new IllegalStateException(
            "the stateful job failed", result.getSerializedThrowable().orElse(null));
      }
      System.out.printf("   job finished in %d ms%n", (System.nanoTime() - start) / 1_000_000);
      report(mini.getExecutionGraph(id).get(1, TimeUnit.MINUTES));
    }
    check();
  }

  private static void report(AccessExecutionGraph graph) {
    AccessExecutionJobVertex keyed = null;
    for (AccessExecutionJobVertex vertex : graph.getVerticesTopologically()) {
      if (vertex.getName().contains("keyed window sum")) {
        keyed = vertex;
      }
    }
    if (keyed == null) {
      throw new IllegalStateException("no keyed operator in the job graph");
    }
    CheckpointStatsSnapshot stats = graph.getCheckpointStatsSnapshot();
    System.out.println("   checkpoints of the keyed operator (Cobble state):");
    System.out.println("     id   state size   uploaded");
    int shown = 0;
    List<AbstractCheckpointStats> completed = new ArrayList<>();
    for (AbstractCheckpointStats checkpoint : stats.getHistory().getCheckpoints()) {
      if (checkpoint.getStatus() == CheckpointStatsStatus.COMPLETED) {
        completed.add(0, checkpoint);
      }
    }
    for (AbstractCheckpointStats checkpoint : completed) {
      if (shown++ == CHECKPOINTS_SHOWN) {
        System.out.printf("   ... and %d more%n", completed.size() - CHECKPOINTS_SHOWN);
        break;
      }
      TaskStateStats task = checkpoint.getTaskStateStats(keyed.getJobVertexId());
      System.out.printf(
          "   %4d %10s B %8s B%n",
          checkpoint.getCheckpointId(), task.getStateSize(), task.getCheckpointedSize());
    }
    RestoredCheckpointStats restored = stats.getLatestRestoredCheckpoint();
    if (restored == null) {
      throw new IllegalStateException("the job restored no checkpoint after the forced failure");
    }
    long restoreMs = 0;
    for (AccessExecutionVertex subtask : keyed.getTaskVertices()) {
      long from =
          subtask.getCurrentExecutionAttempt().getStateTimestamp(ExecutionState.INITIALIZING);
      long to = subtask.getCurrentExecutionAttempt().getStateTimestamp(ExecutionState.RUNNING);
      restoreMs = Math.max(restoreMs, to - from);
    }
    System.out.printf(
        "   forced failure, then restore from checkpoint %d (%d B): keyed operator ready in %d"
            + " ms%n",
        restored.getCheckpointId(), restored.getStateSize(), restoreMs);
  }

  private static void check() {
    Map<String, Long> expected = new java.util.TreeMap<>();
    for (long v = 1; v <= EVENTS; v++) {
      expected.merge((v % KEYS) + "@" + (v - v % WINDOW_MS), v, Long::sum);
    }
    if (!FAILED_ONCE.get()) {
      throw new IllegalStateException("the forced failure did not happen");
    }
    if (!WRONG.isEmpty()) {
      throw new IllegalStateException("wrong window sums after the restore: " + WRONG);
    }
    if (!expected.equals(new java.util.TreeMap<>(RESULTS))) {
      throw new IllegalStateException(
          "window results differ: expected " + expected.size() + ", got " + RESULTS.size());
    }
    System.out.printf(
        "   all %d window sums exact (%d keys, %d events)%n", expected.size(), KEYS, EVENTS);
  }

  /**
   * Holds the input to {@link #EVENTS_PER_SECOND}, so that checkpoints complete while it runs; on a
   * machine too busy to reach that rate it adds no delay.
   */
  private static final class Throttle implements MapFunction<Long, Long> {
    private long startNanos;
    private long count;

    @Override
    public Long map(Long value) throws Exception {
      if (value > EVENTS / 2 && !FAILED_ONCE.get()) {
        // Holds the second half back until the forced failure, which waits for checkpoints: on a
        // slow machine the input would otherwise end first. Barriers pass between records.
        Thread.sleep(5);
      }
      if (count++ == 0) {
        startNanos = System.nanoTime();
      } else if (count % 100 == 0) {
        long dueNanos = startNanos + count * 1_000_000_000L / EVENTS_PER_SECOND;
        long aheadMs = (dueNanos - System.nanoTime()) / 1_000_000;
        if (aheadMs > 0) {
          Thread.sleep(aheadMs);
        }
      }
      return value;
    }
  }

  /**
   * Per key, one map entry per open window holding its sum; an event-time timer at the window's end
   * emits and removes it. Fails once, after some checkpoints have completed.
   */
  private static final class WindowSum
      extends KeyedProcessFunction<Long, Long, Tuple3<Long, Long, Long>>
      implements CheckpointListener {

    private transient MapState<Long, Long> sums;

    @Override
    public void open(Configuration parameters) {
      sums =
          getRuntimeContext().getMapState(new MapStateDescriptor<>("sums", Types.LONG, Types.LONG));
    }

    @Override
    public void processElement(Long value, Context ctx, Collector<Tuple3<Long, Long, Long>> out)
        throws Exception {
      long window = value - value % WINDOW_MS;
      Long sum = sums.get(window);
      sums.put(window, (sum == null ? 0 : sum) + value);
      ctx.timerService().registerEventTimeTimer(window + WINDOW_MS - 1);
      if (LAST_COMPLETED_CHECKPOINT.get() >= FAIL_AFTER_CHECKPOINT
          && FAILED_ONCE.compareAndSet(false, true)) {
        throw new IllegalStateException("forced failure of the quickstart");
      }
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Tuple3<Long, Long, Long>> out)
        throws Exception {
      long window = timestamp + 1 - WINDOW_MS;
      out.collect(Tuple3.of(ctx.getCurrentKey(), window, sums.get(window)));
      sums.remove(window);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      LAST_COMPLETED_CHECKPOINT.accumulateAndGet(checkpointId, Math::max);
    }
  }

  /** Records each window result and every one whose sum is not the exact one. */
  private static final class CheckingSink implements SinkFunction<Tuple3<Long, Long, Long>> {
    @Override
    public void invoke(Tuple3<Long, Long, Long> result, Context context) {
      long key = result.f0;
      long window = result.f1;
      long exact = 0;
      for (long v = Math.max(1, window); v < window + WINDOW_MS && v <= EVENTS; v++) {
        if (v % KEYS == key) {
          exact += v;
        }
      }
      if (result.f2 == null || result.f2 != exact) {
        WRONG.add(key + "@" + window + "=" + result.f2 + " (exact " + exact + ")");
      }
      RESULTS.put(key + "@" + window, result.f2 == null ? -1 : result.f2);
    }
  }
}
