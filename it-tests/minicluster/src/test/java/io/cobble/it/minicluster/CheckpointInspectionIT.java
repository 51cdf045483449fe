package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.flink.state.inspect.CheckpointReader;
import io.cobble.flink.state.inspect.CobbleCheckpoint;
import io.cobble.flink.state.inspect.CobbleOperator;
import io.cobble.flink.state.inspect.CobbleStateInfo;
import io.cobble.flink.state.inspect.OperatorStateView;
import io.cobble.testing.flink.LoopbackMiniCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Cobble HA wrapper as a MiniCluster's {@code high-availability.type} (delegate NONE, auto
 * mode: embedded here): as checkpoints complete their sidecars appear, and subsumed checkpoints
 * vanish whole (Flink's non-recursive delete of {@code chk-N} would fail on a left-over sidecar);
 * the retained checkpoints of a cancelled job keep theirs, and the reader reads the same state from
 * them as from {@code _metadata} once they are removed; a job restored through the wrapper from the
 * newest retained checkpoint ends with exact results.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class CheckpointInspectionIT {

  private static final long N = 20_000;
  private static final int RETAINED = 2;

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER =
      LoopbackMiniCluster.withSlots(
          4,
          Map.of(
              "high-availability.type",
              "io.cobble.flink.state.CobbleHighAvailabilityServicesFactory",
              "cobble.ha.delegate.type",
              "NONE",
              "state.checkpoints.num-retained",
              String.valueOf(RETAINED),
              "execution.checkpointing.num-retained",
              String.valueOf(RETAINED)));

  @TempDir Path dir;

  @BeforeEach
  void reset() {
    KeyedStateJob.reset();
  }

  @AfterEach
  void removeCheckpoints() throws Exception {
    KeyedStateJob.blockAfterCheckpoints = 0;
    StateJobs.removeContents(dir);
  }

  @Test
  void sidecarsFollowTheRetainedCheckpointsAndAJobRestoresThroughTheWrapper() throws Exception {
    Path checkpoints = dir.resolve("checkpoints");
    Map<String, String> conf = KeyedStateJob.config(checkpoints.toUri().toString(), "100 ms");
    conf.put("restart-strategy.type", "none");
    KeyedStateJob.hold = true;
    KeyedStateJob.blockAfterCheckpoints = 5;
    JobClient job = KeyedStateJob.build(conf, 2, N).executeAsync("cobble-ha-wrapper");
    Path jobDir = checkpoints.resolve(job.getJobID().toString());

    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    long firstWithSidecars = -1;
    while (!KeyedStateJob.BLOCKED.get()) {
      assertThat(System.nanoTime())
          .as("5 checkpoints within 3 minutes (%d so far)", KeyedStateJob.COMPLETED.get())
          .isLessThan(deadline);
      assertThat(job.getJobStatus().get().isGloballyTerminalState()).isFalse();
      if (firstWithSidecars < 0) {
        for (Map.Entry<Long, Path> chk : checkpointDirs(jobDir).entrySet()) {
          if (Files.exists(chk.getValue().resolve("_cobble-checkpoint"))) {
            firstWithSidecars = chk.getKey();
            break;
          }
        }
      }
      Thread.sleep(10);
    }
    long last = KeyedStateJob.LAST_BARRIER.get();
    // The newest checkpoint that can complete: wait for it and for every older one but the
    // retained to vanish, sidecars and all.
    Map<Long, Path> remaining = checkpointDirs(jobDir);
    while (!Files.exists(jobDir.resolve("chk-" + last).resolve("_cobble-checkpoint"))
        || upTo(remaining, last).size() > RETAINED) {
      assertThat(System.nanoTime())
          .as("checkpoint %d with sidecars, and only %d retained of %s", last, RETAINED, remaining)
          .isLessThan(deadline);
      Thread.sleep(20);
      remaining = checkpointDirs(jobDir);
    }
    Map<Long, Path> retained = upTo(remaining, last);
    assertThat(retained).hasSize(RETAINED).containsKey(last);
    assertThat(firstWithSidecars).as("a checkpoint seen with sidecars while running").isPositive();
    assertThat(firstWithSidecars)
        .as("the first checkpoint seen with sidecars was subsumed and removed whole")
        .isLessThan(retained.keySet().iterator().next());
    for (Map.Entry<Long, Path> chk : retained.entrySet()) {
      CobbleCheckpoint read = CheckpointReader.open(chk.getValue().toString());
      assertThat(read.source()).isEqualTo(CobbleCheckpoint.Source.SIDECARS);
      assertThat(read.checkpointId()).isEqualTo(chk.getKey());
    }

    JobEnd.cancel(job);
    KeyedStateJob.blockAfterCheckpoints = 0;
    Path newest = jobDir.resolve("chk-" + last);
    assertThat(newest.resolve("_cobble-checkpoint"))
        .as("a checkpoint retained on cancellation keeps its sidecars")
        .exists();

    CobbleCheckpoint fromSidecars = CheckpointReader.open(jobDir.toString());
    assertThat(fromSidecars.source()).isEqualTo(CobbleCheckpoint.Source.SIDECARS);
    assertThat(fromSidecars.checkpointId()).isEqualTo(last);
    Map<Long, List<Object>> viaSidecars = readAll(fromSidecars);
    assertIsAnInputPrefix(viaSidecars);
    try (Stream<Path> files = Files.list(newest)) {
      for (Path f : files.collect(Collectors.toList())) {
        if (f.getFileName().toString().startsWith("_cobble-")) {
          Files.delete(f);
        }
      }
    }
    CobbleCheckpoint fromMetadata = CheckpointReader.open(jobDir.toString());
    assertThat(fromMetadata.source()).isEqualTo(CobbleCheckpoint.Source.METADATA);
    assertThat(fromMetadata.checkpointId()).isEqualTo(last);
    assertThat(fromMetadata.operators()).as("operators with Cobble keyed state").hasSize(1);
    CobbleOperator counts = fromMetadata.operators().get(0);
    assertThat(counts.parallelism()).isEqualTo(2);
    assertThat(counts.maxParallelism()).isEqualTo(128);
    assertThat(counts.subtasks()).hasSize(2);
    assertThat(counts.subtasks().stream().mapToInt(t -> t.keyGroups().getNumberOfKeyGroups()).sum())
        .as("key groups of both subtasks")
        .isEqualTo(128);
    assertThat(counts.states().stream().map(CobbleStateInfo::toString))
        .contains("count (VALUE)", "values (LIST)", "by-residue (MAP)");
    assertThat(counts.states().stream().map(CobbleStateInfo::kind))
        .as("the event-time timers")
        .contains(CobbleStateInfo.TIMERS);
    assertThat(readAll(fromMetadata)).isEqualTo(viaSidecars);

    KeyedStateJob.hold = false;
    Map<String, String> restore = KeyedStateJob.config(checkpoints.toUri().toString(), "100 ms");
    restore.put("restart-strategy.type", "none");
    KeyedStateJob.restoreFrom(restore, newest.toUri().toString());
    KeyedStateJob.build(restore, 2, N)
        .executeAsync("cobble-ha-wrapper-restore")
        .getJobExecutionResult()
        .get(3, TimeUnit.MINUTES);
    KeyedStateJob.assertExactResults(N);
  }

  /**
   * The state of a checkpoint is that of the input prefix 1..p before its barrier, for one p > 0:
   * every key's values are exactly its numbers up to p in order, its count their number, its map
   * their residues modulo 7.
   */
  private static void assertIsAnInputPrefix(Map<Long, List<Object>> state) {
    long prefix = 0;
    for (List<Object> s : state.values()) {
      for (Object v : (List<?>) s.get(1)) {
        prefix = Math.max(prefix, (Long) v);
      }
    }
    assertThat(prefix).as("records before the checkpoint's barrier").isPositive();
    for (long key = 0; key < KeyedStateJob.KEYS; key++) {
      List<Long> values = new ArrayList<>();
      Map<Long, Long> residues = new TreeMap<>();
      for (long v = 1; v <= prefix; v++) {
        if (v % KeyedStateJob.KEYS == key) {
          values.add(v);
          residues.merge(v % 7, 1L, Long::sum);
        }
      }
      assertThat(state.get(key))
          .as("count, values and by-residue of key %d after the prefix 1..%d", key, prefix)
          .containsExactly(values.isEmpty() ? null : (long) values.size(), values, residues);
    }
  }

  /** Per key: count, values, by-residue. */
  private static Map<Long, List<Object>> readAll(CobbleCheckpoint checkpoint) throws Exception {
    Map<Long, List<Object>> out = new TreeMap<>();
    String operator = checkpoint.operators().get(0).operatorId();
    try (OperatorStateView view = checkpoint.openView(operator)) {
      for (long key = 0; key < KeyedStateJob.KEYS; key++) {
        Object count = view.value("count", key);
        Object values = view.list("values", key);
        Object residues = new TreeMap<>(view.<Long, Long>map("by-residue", key));
        out.put(key, java.util.Arrays.asList(count, values, residues));
      }
    }
    return out;
  }

  private static Map<Long, Path> upTo(Map<Long, Path> dirs, long last) {
    return new TreeMap<>(
        dirs.entrySet().stream()
            .filter(e -> e.getKey() <= last)
            .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
  }

  private static Map<Long, Path> checkpointDirs(Path jobDir) throws IOException {
    Map<Long, Path> dirs = new TreeMap<>();
    if (!Files.isDirectory(jobDir)) {
      return dirs;
    }
    try (Stream<Path> s = Files.list(jobDir)) {
      for (Path p : s.collect(Collectors.toList())) {
        String name = p.getFileName().toString();
        if (name.startsWith("chk-")) {
          dirs.put(Long.parseLong(name.substring(4)), p);
        }
      }
    } catch (java.nio.file.NoSuchFileException e) {
      // Listed while Flink removed a directory: the next round lists again.
    }
    return dirs;
  }
}
