package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.flink.state.inspect.CheckpointReader;
import io.cobble.flink.state.inspect.CobbleCheckpoint;
import io.cobble.flink.state.inspect.CobbleOperator;
import io.cobble.flink.state.inspect.CobbleStateInfo;
import io.cobble.flink.state.inspect.OperatorStateView;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checkpoint reader over a real retained checkpoint: a keyed job on the Cobble backend (value,
 * list and map state, event-time timers) is stopped at a checkpoint boundary and cancelled, keeping
 * its checkpoints; the reader, given the job's checkpoint directory, opens the newest complete one
 * through its {@code _metadata}, finds the one Cobble operator with both subtasks and all its
 * states, and reads for every key exactly the state the input prefix before that checkpoint's
 * barrier produced.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CheckpointReaderIT {

  private static final long N = 1_000_000;

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

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
  void readsTheStateOfTheNewestRetainedCheckpoint() throws Exception {
    Path checkpoints = dir.resolve("checkpoints");
    Map<String, String> conf = KeyedStateJob.config(checkpoints.toUri().toString(), "200 ms");
    conf.put("restart-strategy.type", "none");
    KeyedStateJob.hold = true;
    KeyedStateJob.blockAfterCheckpoints = 2;
    JobClient job = KeyedStateJob.build(conf, 2, N).executeAsync("cobble-checkpoint-reader");
    Path jobDir = checkpoints.resolve(job.getJobID().toString());

    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    while (!KeyedStateJob.BLOCKED.get()) {
      assertThat(System.nanoTime())
          .as("2 checkpoints complete within 3 minutes (%d so far)", KeyedStateJob.COMPLETED.get())
          .isLessThan(deadline);
      assertThat(job.getJobStatus().get().isGloballyTerminalState())
          .as("the job still runs while it holds its input")
          .isFalse();
      Thread.sleep(20);
    }
    // The input is stopped for good: the last checkpoint whose barrier passed is the newest that
    // can complete, and no later one can.
    long last = KeyedStateJob.LAST_BARRIER.get();
    Path lastDir = jobDir.resolve("chk-" + last);
    while (!Files.exists(lastDir.resolve("_metadata"))) {
      assertThat(System.nanoTime()).as("%s completes", lastDir).isLessThan(deadline);
      Thread.sleep(20);
    }
    job.cancel().get(1, TimeUnit.MINUTES);
    while (!job.getJobStatus().get().isGloballyTerminalState()) {
      assertThat(System.nanoTime()).as("the job ends").isLessThan(deadline);
      Thread.sleep(20);
    }
    KeyedStateJob.blockAfterCheckpoints = 0;

    CobbleCheckpoint checkpoint = CheckpointReader.open(jobDir.toString());
    assertThat(checkpoint.checkpointId()).isEqualTo(last);
    assertThat(checkpoint.operators()).as("operators with Cobble keyed state").hasSize(1);
    CobbleOperator counts = checkpoint.operators().get(0);
    assertThat(counts.parallelism()).isEqualTo(2);
    assertThat(counts.maxParallelism()).isEqualTo(128);
    assertThat(counts.subtasks()).hasSize(2);
    assertThat(counts.subtasks().stream().mapToInt(s -> s.keyGroups().getNumberOfKeyGroups()).sum())
        .as("key groups of both subtasks")
        .isEqualTo(128);
    List<String> states =
        counts.states().stream().map(CobbleStateInfo::toString).collect(Collectors.toList());
    assertThat(states).contains("count (VALUE)", "values (LIST)", "by-residue (MAP)");
    assertThat(counts.states().stream().map(CobbleStateInfo::kind))
        .as("the event-time timers")
        .contains(CobbleStateInfo.TIMERS);

    Map<Long, List<Long>> lists = new HashMap<>();
    try (OperatorStateView view =
        checkpoint.openView(counts.operatorId(), dir.resolve("staging"))) {
      long prefix = 0;
      for (long key = 0; key < KeyedStateJob.KEYS; key++) {
        List<Long> values = view.list("values", key);
        lists.put(key, values);
        for (Long v : values) {
          prefix = Math.max(prefix, v);
        }
      }
      assertThat(prefix).as("records before the checkpoint's barrier").isPositive();
      for (long key = 0; key < KeyedStateJob.KEYS; key++) {
        List<Long> expected = new ArrayList<>();
        Map<Long, Long> residues = new HashMap<>();
        for (long v = 1; v <= prefix; v++) {
          if (v % KeyedStateJob.KEYS == key) {
            expected.add(v);
            residues.merge(v % 7, 1L, Long::sum);
          }
        }
        assertThat(lists.get(key))
            .as("values of key %d (prefix 1..%d)", key, prefix)
            .isEqualTo(expected);
        assertThat(view.<Long>value("count", key))
            .as("count of key %d", key)
            .isEqualTo(expected.isEmpty() ? null : (long) expected.size());
        assertThat(view.<Long, Long>map("by-residue", key))
            .as("by-residue of key %d", key)
            .isEqualTo(residues);
      }
    }
    assertThat(dir.resolve("staging")).as("the view's staged files after close").isEmptyDirectory();
  }
}
