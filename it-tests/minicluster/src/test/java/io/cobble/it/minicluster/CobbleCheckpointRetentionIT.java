package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.testing.flink.LoopbackMiniCluster;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files are deleted exactly when no retained checkpoint references them: a job on the Cobble
 * backend completes 200 checkpoints (10 ms apart, three retained, every file its own object) while
 * its state keeps changing, so compactions retire engine files all along; it is cancelled, keeping
 * its checkpoints. Then every file in the job's {@code shared/} directory is named by a retained
 * checkpoint's {@code _metadata} (no leak), every file a retained checkpoint names exists (nothing
 * lost), and a new job restores in CLAIM mode from the oldest checkpoint retained on cancellation
 * and ends with exact state.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class CobbleCheckpointRetentionIT {

  private static final long N = 100_000;
  private static final int CHECKPOINTS = 200;
  private static final int RETAINED = 3;

  /** The JobManager reads the retained count from the cluster's configuration only. */
  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER =
      LoopbackMiniCluster.withSlots(
          4,
          Map.of(
              // The key before 1.20 and since (2.x reads only the new one).
              "state.checkpoints.num-retained",
              String.valueOf(RETAINED),
              "execution.checkpointing.num-retained",
              String.valueOf(RETAINED)));

  @TempDir Path dir;

  @BeforeEach
  void reset() {
    KeyedStateJob.reset();
  }

  /**
   * Flink discards subsumed and claimed checkpoint files asynchronously, also after a job ended, so
   * the checkpoints are removed here, tolerating files that vanish meanwhile, before the temporary
   * directory's own cleanup (which fails on such a file).
   */
  @AfterEach
  void removeCheckpoints() throws Exception {
    KeyedStateJob.blockAfterCheckpoints = 0;
    StateJobs.removeContents(dir);
  }

  @Test
  void twoHundredCheckpointsLeaveExactlyTheFilesOfTheRetainedOnesAndTheOldestRestores()
      throws Exception {
    Path checkpoints = dir.resolve("checkpoints");
    Map<String, String> conf = retainingConfig(checkpoints);
    conf.put("restart-strategy.type", "none");
    KeyedStateJob.hold = true;
    KeyedStateJob.blockAfterCheckpoints = CHECKPOINTS;
    JobClient job = KeyedStateJob.build(conf, 2, N).executeAsync("cobble-retention");
    Path jobDir = checkpoints.resolve(job.getJobID().toString());
    Path shared = jobDir.resolve("shared");

    Set<String> everShared = new HashSet<>();
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(4);
    while (!KeyedStateJob.BLOCKED.get()) {
      assertThat(System.nanoTime())
          .as(
              "%d checkpoints within 4 minutes (%d so far)",
              CHECKPOINTS, KeyedStateJob.COMPLETED.get())
          .isLessThan(deadline);
      assertThat(job.getJobStatus().get().isGloballyTerminalState())
          .as("the job still runs while it holds its input")
          .isFalse();
      everShared.addAll(fileNames(shared));
      Thread.sleep(20);
    }
    // Cancel only once the last checkpoint that may hold state completed: Flink itself leaks the
    // files of a checkpoint whose acknowledgement reaches the JobManager after cancellation shut
    // its checkpoint coordinator down (it ignores such an acknowledgement), whatever the backend.
    Path last = jobDir.resolve("chk-" + KeyedStateJob.LAST_BARRIER.get());
    long settled = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (!Files.exists(last.resolve("_metadata"))) {
      assertThat(System.nanoTime()).as("%s completes", last).isLessThan(settled);
      Thread.sleep(20);
    }
    JobEnd.cancel(job);
    KeyedStateJob.blockAfterCheckpoints = 0;

    // Flink discards the subsumed checkpoints asynchronously: wait until only the retained remain.
    List<Path> retained = completedCheckpoints(jobDir);
    Set<String> referenced = referencedSharedFiles(retained, shared);
    Set<String> unreferenced = unreferenced(shared, referenced);
    long cleanupDeadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while ((retained.size() > RETAINED || !unreferenced.isEmpty())
        && System.nanoTime() < cleanupDeadline) {
      Thread.sleep(100);
      retained = completedCheckpoints(jobDir);
      referenced = referencedSharedFiles(retained, shared);
      unreferenced = unreferenced(shared, referenced);
    }
    assertThat(retained).as("the checkpoints retained on cancellation").hasSize(RETAINED);
    assertThat(unreferenced)
        .as("files in shared/ that no retained checkpoint references (leaked)")
        .isEmpty();
    Set<String> present = fileNames(shared);
    assertThat(referenced).as("files the retained checkpoints reference").isNotEmpty();
    assertThat(present)
        .as("every file a retained checkpoint references exists")
        .containsAll(referenced);
    everShared.addAll(present);
    assertThat(everShared.size())
        .as("files were retired and deleted during the run (else this test proves nothing)")
        .isGreaterThan(present.size());

    KeyedStateJob.hold = false;
    Map<String, String> restore = retainingConfig(checkpoints);
    restore.put("restart-strategy.type", "none");
    KeyedStateJob.restoreFrom(restore, retained.get(0).toUri().toString());
    KeyedStateJob.build(restore, 2, N)
        .executeAsync("cobble-retention-restore-oldest")
        .getJobExecutionResult()
        .get(3, TimeUnit.MINUTES);
    KeyedStateJob.assertExactResults(N);
  }

  private static Map<String, String> retainingConfig(Path checkpoints) {
    Map<String, String> conf = KeyedStateJob.config(checkpoints.toUri().toString(), "10 ms");
    // Every state file its own file in shared/, none inlined into _metadata.
    conf.put("state.storage.fs.memory-threshold", "0");
    conf.put("execution.checkpointing.data-inline-threshold", "0");
    return conf;
  }

  /** The completed checkpoints in the job's directory, oldest first. */
  private static List<Path> completedCheckpoints(Path jobDir) throws IOException {
    try (Stream<Path> dirs = Files.list(jobDir)) {
      return dirs.filter(p -> p.getFileName().toString().startsWith("chk-"))
          .filter(p -> Files.exists(p.resolve("_metadata")))
          .sorted(Comparator.comparingLong(CobbleCheckpointRetentionIT::checkpointNumber))
          .collect(Collectors.toList());
    }
  }

  private static long checkpointNumber(Path checkpointDir) {
    return Long.parseLong(checkpointDir.getFileName().toString().substring("chk-".length()));
  }

  /** Names of the files in {@code shared/} that the checkpoints' keyed state handles reference. */
  private static Set<String> referencedSharedFiles(List<Path> checkpoints, Path shared)
      throws IOException {
    Set<String> names = new TreeSet<>();
    for (Path checkpoint : checkpoints) {
      CheckpointMetadata metadata;
      try (InputStream in = Files.newInputStream(checkpoint.resolve("_metadata"))) {
        metadata =
            Checkpoints.loadCheckpointMetadata(
                new DataInputStream(in),
                CobbleCheckpointRetentionIT.class.getClassLoader(),
                checkpoint.toString());
      } catch (java.nio.file.NoSuchFileException e) {
        // Discarded between the listing and here: the next round lists again.
        continue;
      }
      for (OperatorState operator : metadata.getOperatorStates()) {
        for (OperatorSubtaskState subtask : operator.getStates()) {
          for (KeyedStateHandle keyed : subtask.getManagedKeyedState()) {
            assertThat(keyed).isInstanceOf(IncrementalRemoteKeyedStateHandle.class);
            for (HandleAndLocalPath file :
                ((IncrementalRemoteKeyedStateHandle) keyed).getSharedState()) {
              names.add(sharedFileName(file.getHandle(), shared, checkpoint));
            }
          }
        }
      }
    }
    return names;
  }

  private static String sharedFileName(StreamStateHandle handle, Path shared, Path checkpoint) {
    assertThat(handle)
        .as("a shared file of %s (none is inlined, none is left a placeholder)", checkpoint)
        .isInstanceOf(FileStateHandle.class);
    Path file = Paths.get(((FileStateHandle) handle).getFilePath().toUri().getPath());
    assertThat(file.getParent()).as("the directory of %s", file).isEqualTo(shared);
    return file.getFileName().toString();
  }

  private static Set<String> unreferenced(Path shared, Set<String> referenced) throws IOException {
    Set<String> extra = new TreeSet<>(fileNames(shared));
    extra.removeAll(referenced);
    return extra;
  }

  private static Set<String> fileNames(Path directory) throws IOException {
    if (!Files.isDirectory(directory)) {
      return new TreeSet<>();
    }
    List<String> names = new ArrayList<>();
    try (Stream<Path> files = Files.list(directory)) {
      files.forEach(p -> names.add(p.getFileName().toString()));
    } catch (java.nio.file.NoSuchFileException e) {
      // Removed while listed.
    }
    return new TreeSet<>(names);
  }
}
