package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.shim.FlinkLineShim;
import io.cobble.flink.shim.RunningFlink;
import io.cobble.testing.flink.LoopbackMiniCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
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
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Canonical savepoints between RocksDB and Cobble on this line's MiniCluster. A job with every
 * keyed state kind (a map entry with a null value included), an event-time timer and a
 * processing-time timer per key stops with a canonical savepoint mid-stream; another job on the
 * other backend, at the same or a changed parallelism, restores it and runs to the end. Each key's
 * result is a function of the whole input and of both timers firing once, so a lost or doubled row,
 * a lost null value or a lost timer shows up. The processing timers are due {@link #TIMER_DELAY_MS}
 * after registration, after the savepoint: they can only fire in the restored job.
 */
class CanonicalSavepointIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  private static final long N = 6_000;
  private static final int KEYS = 24;
  private static final long TIMER_DELAY_MS = 15_000;
  private static final String COBBLE = "io.cobble.flink.state.CobbleStateBackendFactory";
  private static final String ROCKSDB = "rocksdb";

  /** Per key: count, list size, list sum, map total, null map values, sum, max, processing. */
  static final Map<Long, long[]> RESULTS = new ConcurrentHashMap<>();

  static final Set<Long> SEEN = ConcurrentHashMap.newKeySet();
  static final Set<Long> PROCESSING_FIRED = ConcurrentHashMap.newKeySet();
  static volatile boolean beforeSavepoint;

  @TempDir static Path dir;

  static Path rocksP2;
  static Path rocksP3;
  static Path cobbleP2;

  /** The savepoints every test restores, all taken first so the timers' wait is paid once. */
  @BeforeAll
  static void takeSavepoints() throws Exception {
    rocksP2 = runUntilAllKeysAndStopWithSavepoint(ROCKSDB, 2, "rocks-p2");
    rocksP3 = runUntilAllKeysAndStopWithSavepoint(ROCKSDB, 3, "rocks-p3");
    cobbleP2 = runUntilAllKeysAndStopWithSavepoint(COBBLE, 2, "cobble-p2");
  }

  @BeforeEach
  void reset() {
    RESULTS.clear();
    PROCESSING_FIRED.clear();
  }

  /** Flink may discard claimed files asynchronously; vanishing files are tolerated. */
  @AfterAll
  static void removeFiles() throws Exception {
    StateJobs.removeContents(dir);
  }

  @Test
  void rocksDbSavepointRestoresIntoCobbleAtTheSameParallelism() throws Exception {
    restoreAndRunToEnd(COBBLE, rocksP2, 2, "rocks-2-cobble-2");
    assertExactResults();
  }

  @Test
  void rocksDbSavepointRestoresIntoCobbleScalingFrom2To3() throws Exception {
    restoreAndRunToEnd(COBBLE, rocksP2, 3, "rocks-2-cobble-3");
    assertExactResults();
  }

  @Test
  void rocksDbSavepointRestoresIntoCobbleScalingFrom3To2() throws Exception {
    restoreAndRunToEnd(COBBLE, rocksP3, 2, "rocks-3-cobble-2");
    assertExactResults();
  }

  @Test
  void cobbleSavepointRestoresIntoRocksDbScalingFrom2To3() throws Exception {
    restoreAndRunToEnd(ROCKSDB, cobbleP2, 3, "cobble-2-rocks-3");
    assertExactResults();
  }

  @Test
  void aRetypedStateIsRejectedNamingTheStateTheRoleAndBothSerializers() throws Exception {
    Map<String, String> conf = restoreConfig(COBBLE, copy(rocksP2, "retyped"));
    conf.put("restart-strategy.type", "none");
    assertThatThrownBy(() -> job(conf, 2, true).execute("retyped"))
        .satisfies(
            e -> {
              String message = rootMessages(e);
              assertThat(message)
                  .contains("Cannot restore state 'count' from the canonical savepoint")
                  .contains("the value serializer")
                  .contains("is incompatible")
                  .contains("LongSerializer")
                  .contains("StringSerializer");
            });
  }

  @Test
  void aNoClaimRestoreOfACanonicalSavepointIsRejected() throws Exception {
    Map<String, String> conf = restoreConfig(COBBLE, copy(rocksP2, "no-claim"));
    conf.put(ShimLoader.current().recoveryClaimModeKey(RunningFlink.version()), "NO_CLAIM");
    conf.put("restart-strategy.type", "none");
    // 1.17 and 1.18 do not pass the restore mode to the TaskManagers; Flink then rejects the
    // forced full checkpoint that follows a NO_CLAIM restore.
    String rejection =
        RunningFlink.version().startsWith("1.17") || RunningFlink.version().startsWith("1.18")
            ? "does not support enforcing a full snapshot"
            : "restores only in CLAIM";
    conf.put("execution.checkpointing.interval", "100 ms");
    assertThatThrownBy(() -> job(conf, 2, false).execute("no-claim"))
        .satisfies(
            e ->
                assertThat(ExceptionUtils.findThrowableWithMessage(e, rejection))
                    .as("a NO_CLAIM restore is rejected naming CLAIM")
                    .isPresent());
  }

  private static String rootMessages(Throwable e) {
    StringBuilder all = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      all.append(t.getMessage()).append('\n');
    }
    return all.toString();
  }

  private static Path runUntilAllKeysAndStopWithSavepoint(String backend, int p, String name)
      throws Exception {
    SEEN.clear();
    beforeSavepoint = true;
    Map<String, String> conf = new HashMap<>();
    conf.put("state.backend.type", backend);
    conf.put("restart-strategy.type", "none");
    FlinkLineShim shim = ShimLoader.current();
    conf.put(
        shim.checkpointDirKey(RunningFlink.version()),
        dir.resolve("checkpoints-" + name).toUri().toString());
    JobClient job = job(conf, p, false).executeAsync("savepoint-" + name);
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (SEEN.size() < KEYS && System.nanoTime() < deadline) {
      if (job.getJobStatus().get().isGloballyTerminalState()) {
        // Surfaces the job's failure instead of a count of keys.
        job.getJobExecutionResult().get();
        throw new AssertionError("job " + name + " ended before its savepoint");
      }
      Thread.sleep(20);
    }
    assertThat(SEEN).as("every key was seen before the savepoint").hasSize(KEYS);
    String path =
        job.stopWithSavepoint(
                false,
                dir.resolve("savepoints-" + name).toUri().toString(),
                SavepointFormatType.CANONICAL)
            .get(2, TimeUnit.MINUTES);
    beforeSavepoint = false;
    assertThat(PROCESSING_FIRED)
        .as(
            "no processing timer fired before the savepoint (due %s ms after registration)",
            TIMER_DELAY_MS)
        .isEmpty();
    assertThat(RESULTS).as("the job was stopped before its end").isEmpty();
    return Path.of(java.net.URI.create(path));
  }

  /** A copy per restore: a CLAIM restore hands the savepoint's ownership to the new job. */
  private static Path copy(Path savepoint, String name) throws IOException {
    Path target = dir.resolve("restore-" + name);
    try (Stream<Path> walk = Files.walk(savepoint)) {
      for (Path p : (Iterable<Path>) walk::iterator) {
        Files.copy(p, target.resolve(savepoint.relativize(p).toString()));
      }
    }
    return target;
  }

  private static Map<String, String> restoreConfig(String backend, Path savepoint) {
    Map<String, String> conf = new HashMap<>();
    conf.put("state.backend.type", backend);
    FlinkLineShim shim = ShimLoader.current();
    conf.put(
        shim.checkpointDirKey(RunningFlink.version()),
        dir.resolve("checkpoints-" + savepoint.getFileName()).toUri().toString());
    conf.put("execution.savepoint.path", savepoint.toUri().toString());
    conf.put(shim.recoveryClaimModeKey(RunningFlink.version()), "CLAIM");
    return conf;
  }

  private static void restoreAndRunToEnd(String backend, Path savepoint, int p, String name)
      throws Exception {
    Map<String, String> conf = restoreConfig(backend, copy(savepoint, name));
    conf.put("restart-strategy.type", "none");
    job(conf, p, false).execute(name);
  }

  private static StreamExecutionEnvironment job(
      Map<String, String> conf, int parallelism, boolean retyped) {
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(conf));
    env.setParallelism(parallelism);
    env.setMaxParallelism(128);
    KeyedStream<Long, Long> keyed =
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
            .keyBy(new StateJobs.ByKey(KEYS));
    (retyped ? keyed.process(new Retyped()) : keyed.process(new AllStates()))
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
      long[] e = expected.computeIfAbsent(v % KEYS, k -> new long[8]);
      e[0]++;
      e[1]++;
      e[2] += v;
      e[3]++;
      e[4] = 1;
      e[5] += v;
      e[6] = Math.max(e[6], v);
      e[7] = 1;
    }
    StateJobs.assertResults(RESULTS, expected);
  }

  /**
   * Paces the input before the savepoint; after it, holds the last element until every restored
   * processing timer fired, so they fire before the end of the input ends the job.
   */
  static final class Gate implements MapFunction<Long, Long> {
    @Override
    public Long map(Long value) throws Exception {
      if (beforeSavepoint && value % 10 == 0) {
        TimeUnit.MILLISECONDS.sleep(20);
      }
      if (!beforeSavepoint && value == N) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMER_DELAY_MS / 1000 + 60);
        while (PROCESSING_FIRED.size() < KEYS && System.nanoTime() < deadline) {
          TimeUnit.MILLISECONDS.sleep(20);
        }
      }
      return value;
    }
  }

  /** Every keyed state kind; reports at the event-time timer, counts the processing timer. */
  static final class AllStates extends KeyedProcessFunction<Long, Long, long[]> {
    private transient ValueState<Long> count;
    private transient ValueState<Long> processingFired;
    private transient ListState<Long> values;
    private transient MapState<Long, Long> byResidue;
    private transient MapState<Long, String> nullable;
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
      // String values: RocksDB writes a null value through the value serializer as well.
      nullable =
          getRuntimeContext()
              .getMapState(new MapStateDescriptor<>("nullable", Long.class, String.class));
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
      SEEN.add(ctx.getCurrentKey());
      Long c = count.value();
      if (c == null) {
        ctx.timerService().registerEventTimeTimer(N + 1);
        ctx.timerService()
            .registerProcessingTimeTimer(
                ctx.timerService().currentProcessingTime() + TIMER_DELAY_MS);
        nullable.put(-1L, null);
        nullable.put(-2L, "present");
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
        PROCESSING_FIRED.add(ctx.getCurrentKey());
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
      long nulls = 0;
      for (Map.Entry<Long, String> e : nullable.entries()) {
        if (e.getValue() == null && nullable.contains(e.getKey())) {
          nulls++;
        } else if (!"present".equals(e.getValue())) {
          nulls += 100;
        }
      }
      Long fired = processingFired.value();
      out.collect(
          new long[] {
            ctx.getCurrentKey(),
            count.value(),
            size,
            listSum,
            mapTotal,
            nulls,
            sum.get(),
            max.get(),
            fired == null ? 0 : fired
          });
    }
  }

  /** The job's operator with its "count" state retyped from Long to String. */
  static final class Retyped extends KeyedProcessFunction<Long, Long, long[]> {
    private transient ValueState<String> count;

    @Override
    public void processElement(Long value, Context ctx, Collector<long[]> out) throws Exception {
      if (count == null) {
        count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", String.class));
      }
      count.update(String.valueOf(value));
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
