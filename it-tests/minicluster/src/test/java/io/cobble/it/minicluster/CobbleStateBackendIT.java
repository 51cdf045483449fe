package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.shim.FlinkLineShim;
import io.cobble.flink.shim.RunningFlink;
import io.cobble.testing.flink.LoopbackMiniCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Cobble state backend on this line's MiniCluster, with this line's dist jar: a DataStream job
 * using every keyed state kind and both timer kinds fails once and recovers with exact results, and
 * a job resumes from retained checkpoints in CLAIM mode while its parallelism goes 3, 4, 2 (a
 * NO_CLAIM restore in between is rejected). Each key's final state is a function of the whole
 * input, so a lost or doubled record, a lost timer or a timer fired twice shows up in the results.
 */
class CobbleStateBackendIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  private static final long N = 20_000;
  private static final int KEYS = 40;
  private static final String FACTORY = "io.cobble.flink.state.CobbleStateBackendFactory";

  /** Per key: count, list size, list sum, map total, reduced sum, max, processing timers fired. */
  static final Map<Long, long[]> RESULTS = new ConcurrentHashMap<>();

  static final AtomicBoolean FAILED = new AtomicBoolean();
  static volatile boolean failOnce;
  static volatile int pauseMicros;

  @TempDir Path dir;

  /**
   * Flink discards subsumed and claimed checkpoint files asynchronously, also after a job ended, so
   * the checkpoints are removed here, tolerating files that vanish meanwhile, before the temporary
   * directory's own cleanup (which fails on such a file).
   */
  @AfterEach
  void removeCheckpoints() throws Exception {
    StateJobs.removeContents(dir);
  }

  @BeforeEach
  void reset() {
    RESULTS.clear();
    FAILED.set(false);
    failOnce = false;
    pauseMicros = 0;
  }

  @Test
  void everyStateKindAndTimerKindRecoverExactlyOnceAfterAFailure() throws Exception {
    failOnce = true;
    pauseMicros = 50;
    Map<String, String> conf = baseConfig(dir.resolve("checkpoints"));
    conf.put("restart-strategy.type", "fixed-delay");
    conf.put("restart-strategy.fixed-delay.attempts", "3");
    conf.put("restart-strategy.fixed-delay.delay", "200 ms");
    JobClient job = buildJob(conf, 2).executeAsync("cobble-state-failover");
    job.getJobExecutionResult().get(5, TimeUnit.MINUTES);

    assertThat(FAILED).as("the injected failure happened").isTrue();
    assertExactResults();
  }

  @Test
  void restoresFromRetainedCheckpointsInClaimModeWhileRescaling3To4To2() throws Exception {
    pauseMicros = 400;
    Path checkpoints = dir.resolve("retained");
    Path first = runUntilCheckpointAndCancel(baseConfig(checkpoints), 3, null);

    Map<String, String> noClaim = baseConfig(checkpoints);
    restoreFrom(noClaim, first);
    noClaim.put(ShimLoader.current().recoveryClaimModeKey(RunningFlink.version()), "NO_CLAIM");
    noClaim.put("restart-strategy.type", "none");
    // 1.17 and 1.18 do not pass the restore mode to the TaskManagers, so Cobble cannot reject the
    // restore before it starts; Flink then fails the job at its first checkpoint, which NO_CLAIM
    // forces to be a full one (Cobble does not support that).
    String rejection =
        RunningFlink.version().startsWith("1.17") || RunningFlink.version().startsWith("1.18")
            ? "does not support enforcing a full snapshot"
            : "restores only in CLAIM";
    assertThatThrownBy(() -> buildJob(noClaim, 4).execute("cobble-state-no-claim"))
        .satisfies(
            e ->
                assertThat(ExceptionUtils.findThrowableWithMessage(e, rejection))
                    .as("a NO_CLAIM restore is rejected naming CLAIM")
                    .isPresent());

    Path second = runUntilCheckpointAndCancel(baseConfig(checkpoints), 4, first);
    pauseMicros = 0;
    Map<String, String> conf = baseConfig(checkpoints);
    restoreFrom(conf, second);
    buildJob(conf, 2).execute("cobble-state-rescale-2");

    assertExactResults();
  }

  private static Map<String, String> baseConfig(Path checkpoints) {
    FlinkLineShim shim = ShimLoader.current();
    Map<String, String> conf = new HashMap<>();
    conf.put("state.backend.type", FACTORY);
    conf.put(shim.checkpointDirKey(RunningFlink.version()), checkpoints.toUri().toString());
    conf.put("execution.checkpointing.interval", "100 ms");
    conf.put("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
    return conf;
  }

  private static void restoreFrom(Map<String, String> conf, Path checkpoint) {
    conf.put("execution.savepoint.path", checkpoint.toUri().toString());
    conf.put(ShimLoader.current().recoveryClaimModeKey(RunningFlink.version()), "CLAIM");
  }

  /** Runs the job until it completed a checkpoint after its start, cancels it, returns that. */
  private Path runUntilCheckpointAndCancel(Map<String, String> conf, int parallelism, Path from)
      throws Exception {
    if (from != null) {
      restoreFrom(conf, from);
    }
    JobClient job = buildJob(conf, parallelism).executeAsync("cobble-state-p" + parallelism);
    Path jobDir =
        Path.of(
                java.net.URI.create(
                    conf.get(ShimLoader.current().checkpointDirKey(RunningFlink.version()))))
            .resolve(job.getJobID().toString());
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    Optional<Path> latest = Optional.empty();
    while (System.nanoTime() < deadline) {
      latest = latestCompleted(jobDir);
      if (latest.isPresent() && checkpointNumber(latest.get()) >= 2) {
        break;
      }
      Thread.sleep(50);
    }
    JobEnd.cancel(job);
    latest = latestCompleted(jobDir);
    assertThat(latest)
        .as("a completed checkpoint of job at parallelism " + parallelism)
        .isPresent();
    assertThat(RESULTS).as("the job was cancelled before its end").isEmpty();
    return latest.get();
  }

  private static Optional<Path> latestCompleted(Path jobDir) throws Exception {
    if (!Files.isDirectory(jobDir)) {
      return Optional.empty();
    }
    try (Stream<Path> dirs = Files.list(jobDir)) {
      return dirs.filter(p -> p.getFileName().toString().startsWith("chk-"))
          .filter(p -> Files.exists(p.resolve("_metadata")))
          .max((a, b) -> Long.compare(checkpointNumber(a), checkpointNumber(b)));
    }
  }

  private static long checkpointNumber(Path checkpointDir) {
    return Long.parseLong(checkpointDir.getFileName().toString().substring("chk-".length()));
  }

  private static StreamExecutionEnvironment buildJob(Map<String, String> conf, int parallelism) {
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(conf));
    env.setParallelism(parallelism);
    env.setMaxParallelism(128);
    env.fromSequence(1, N)
        .uid("numbers")
        .setParallelism(1)
        .map(new Gate())
        .uid("gate")
        .setParallelism(1)
        .assignTimestampsAndWatermarks(
            WatermarkStrategy.<Long>forMonotonousTimestamps()
                .withTimestampAssigner((value, previous) -> value))
        .uid("timestamps")
        .setParallelism(1)
        .keyBy(new StateJobs.ByKey(KEYS))
        .process(new AllStates())
        .uid("all-states")
        .map(new Record())
        .uid("record")
        .sinkTo(ShimLoader.current().<long[]>discardingSink())
        .uid("discard");
    return env;
  }

  private static void assertExactResults() {
    Map<Long, long[]> expected = new HashMap<>();
    for (long v = 1; v <= N; v++) {
      long[] e = expected.computeIfAbsent(v % KEYS, k -> new long[7]);
      e[0]++;
      e[1]++;
      e[2] += v;
      e[3]++;
      e[4] += v;
      e[5] = Math.max(e[5], v);
      e[6] = 1;
    }
    StateJobs.assertResults(RESULTS, expected);
  }

  /** Paces the input so checkpoints happen mid-stream; fails once in the failover test. */
  static final class Gate implements MapFunction<Long, Long>, CheckpointListener {
    private long completed;

    @Override
    public Long map(Long value) throws Exception {
      if (pauseMicros > 0 && value % 10 == 0) {
        TimeUnit.MICROSECONDS.sleep(pauseMicros * 10L);
      }
      if (failOnce && completed > 0 && value > N / 2 && FAILED.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure at " + value);
      }
      return value;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      completed++;
    }
  }

  /** Every keyed state kind; an event-time timer reports at the end, a processing timer once. */
  static final class AllStates extends KeyedProcessFunction<Long, Long, long[]> {
    private transient ValueState<Long> count;
    private transient ValueState<Long> processingFired;
    private transient ListState<Long> values;
    private transient MapState<Long, Long> byResidue;
    private transient ReducingState<Long> sum;
    private transient AggregatingState<Long, Long> max;

    // Not open(): its signature differs between Flink 1.x and 2.x, and this test runs on both.
    private void init() {
      if (count != null) {
        return;
      }
      count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
      processingFired =
          getRuntimeContext().getState(new ValueStateDescriptor<>("processing-fired", Long.class));
      values = getRuntimeContext().getListState(new ListStateDescriptor<>("values", Long.class));
      byResidue =
          getRuntimeContext()
              .getMapState(new MapStateDescriptor<>("by-residue", Long.class, Long.class));
      sum =
          getRuntimeContext()
              .getReducingState(new ReducingStateDescriptor<>("sum", Long::sum, Long.class));
      max =
          getRuntimeContext()
              .getAggregatingState(
                  new AggregatingStateDescriptor<>("max", new StateJobs.Max(), Long.class));
    }

    @Override
    public void processElement(Long value, Context ctx, Collector<long[]> out) throws Exception {
      init();
      Long c = count.value();
      if (c == null) {
        ctx.timerService().registerEventTimeTimer(N + 1);
        ctx.timerService()
            .registerProcessingTimeTimer(ctx.timerService().currentProcessingTime() + 5);
      }
      count.update(c == null ? 1 : c + 1);
      values.add(value);
      long residue = value % 7;
      Long r = byResidue.get(residue);
      byResidue.put(residue, r == null ? 1 : r + 1);
      sum.add(value);
      max.add(value);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<long[]> out)
        throws Exception {
      init();
      if (timestamp != N + 1) {
        Long fired = processingFired.value();
        processingFired.update(fired == null ? 1 : fired + 1);
        return;
      }
      long size = 0;
      long listSum = 0;
      for (Long v : values.get()) {
        size++;
        listSum += v;
      }
      long mapTotal = 0;
      for (Long n : byResidue.values()) {
        mapTotal += n;
      }
      Long fired = processingFired.value();
      out.collect(
          new long[] {
            ctx.getCurrentKey(),
            count.value(),
            size,
            listSum,
            mapTotal,
            sum.get(),
            max.get(),
            fired == null ? 0 : fired
          });
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
