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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A NO_CLAIM restore whose settings are part of the cluster's configuration (as in application mode
 * or a per-job cluster; here a per-job MiniCluster built from the job's configuration) is rejected
 * when the keyed backend is built, before the operator writes any state, on every line. On 1.17 and
 * 1.18 the TaskManager sees the restore settings only this way: the job's own configuration never
 * carries them there.
 */
class ClaimModeInClusterConfigIT {
  private static final String FACTORY = "io.cobble.flink.state.CobbleStateBackendFactory";

  /** State writes of the keyed operator, across all subtasks of the running job. */
  static final AtomicLong WRITES = new AtomicLong();

  @TempDir Path dir;

  @AfterEach
  void removeCheckpoints() throws Exception {
    StateJobs.removeContents(dir);
  }

  @Test
  void aNoClaimRestoreNamedInTheClusterConfigurationFailsBeforeAnyStateIsWritten()
      throws Exception {
    FlinkLineShim shim = ShimLoader.current();
    String version = RunningFlink.version();
    Path checkpoints = dir.resolve("checkpoints");
    Map<String, String> conf = config(checkpoints);
    JobClient job = job(conf).executeAsync("cobble-claim-first");
    Path jobDir = checkpoints.resolve(job.getJobID().toString());
    Optional<Path> retained = Optional.empty();
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    while (!retained.isPresent() && System.nanoTime() < deadline) {
      retained = completedCheckpoint(jobDir);
      Thread.sleep(50);
    }
    assertThat(retained).as("a completed checkpoint within 3 minutes").isPresent();
    assertThat(WRITES.get()).as("the first job wrote state").isPositive();
    JobEnd.cancel(job);
    // Later checkpoints subsume the first one; the one retained on cancellation is the newest.
    retained = completedCheckpoint(jobDir);
    assertThat(retained).as("the checkpoint retained on cancellation").isPresent();

    WRITES.set(0);
    Map<String, String> noClaim = config(checkpoints);
    noClaim.put("execution.savepoint.path", retained.get().toUri().toString());
    noClaim.put(shim.recoveryClaimModeKey(version), "NO_CLAIM");
    noClaim.put("restart-strategy.type", "none");
    assertThatThrownBy(() -> job(noClaim).execute("cobble-claim-no-claim"))
        .satisfies(
            e ->
                assertThat(
                        ExceptionUtils.findThrowableWithMessage(
                            e, "restores only in CLAIM mode, but this job restores in NO_CLAIM"))
                    .as("rejected naming CLAIM: " + ExceptionUtils.stringifyException(e))
                    .hasValueSatisfying(
                        t ->
                            assertThat(t.getMessage())
                                .contains("'" + shim.recoveryClaimModeKey(version) + "'")));
    assertThat(WRITES.get()).as("no state written by the rejected restore").isZero();
  }

  private static Map<String, String> config(Path checkpoints) {
    FlinkLineShim shim = ShimLoader.current();
    Map<String, String> conf = new HashMap<>(LoopbackMiniCluster.settings());
    conf.put("rest.port", "0");
    conf.put("state.backend.type", FACTORY);
    conf.put(shim.checkpointDirKey(RunningFlink.version()), checkpoints.toUri().toString());
    conf.put("execution.checkpointing.interval", "100 ms");
    conf.put("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
    return conf;
  }

  /** A per-job MiniCluster whose configuration is the job's: its TaskManager sees the restore. */
  private static StreamExecutionEnvironment job(Map<String, String> conf) {
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createLocalEnvironment(2, Configuration.fromMap(conf));
    env.setMaxParallelism(128);
    env.fromSequence(0, Long.MAX_VALUE)
        .uid("numbers")
        .setParallelism(1)
        .keyBy(v -> v % 64)
        .process(new Counting())
        .uid("counting");
    return env;
  }

  private static Optional<Path> completedCheckpoint(Path jobDir) throws Exception {
    if (!Files.isDirectory(jobDir)) {
      return Optional.empty();
    }
    try (Stream<Path> dirs = Files.list(jobDir)) {
      return dirs.filter(p -> p.getFileName().toString().startsWith("chk-"))
          .filter(p -> Files.exists(p.resolve("_metadata")))
          .max(
              (a, b) ->
                  Long.compare(
                      Long.parseLong(a.getFileName().toString().substring("chk-".length())),
                      Long.parseLong(b.getFileName().toString().substring("chk-".length()))));
    }
  }

  /** Counts per key; every update is a state write. */
  static final class Counting extends KeyedProcessFunction<Long, Long, Void> {
    private transient ValueState<Long> count;

    @Override
    public void processElement(Long value, Context ctx, Collector<Void> out) throws Exception {
      if (count == null) {
        // Not open(): its signature differs between Flink 1.x and 2.x.
        count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
      }
      Long c = count.value();
      count.update(c == null ? 1 : c + 1);
      WRITES.incrementAndGet();
      if (value % 1000 == 0) {
        Thread.sleep(1);
      }
    }
  }
}
