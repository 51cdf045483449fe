package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.testing.flink.LoopbackMiniCluster;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
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
 * {@code localdir.primary-high-priority=false}: the Cobble shard's working files live in the
 * checkpoint directory ({@code shared/cobble-<id>/}) and checkpoints hand them to Flink where they
 * lie. A job fails once and recovers with exact results; a job checkpoints 30 times with two
 * checkpoints retained and is cancelled: every file under {@code shared/} is one a retained
 * checkpoint's {@code _metadata} names (no leak), every named file exists, every shard file of
 * every checkpoint is a working file in place (no byte of data uploaded, nothing copied into {@code
 * shared/}), and the oldest retained checkpoint restores in CLAIM mode with exact state. Both the
 * recovery and the restore keep the key-group ranges, so the shards resume in place on the
 * checkpoint's files (what that writes and reads: {@code PrimaryOnCheckpointStorageTest}). (A
 * failure and recovery with working files on the checkpoint storage: {@link
 * CobbleCheckpointPrimaryOnS3IT}.)
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class CobbleCheckpointPrimaryIT {

  private static final long N = 20_000;
  private static final int CHECKPOINTS = 30;
  private static final int RETAINED = 2;

  /** The JobManager reads the retained count from the cluster's configuration only. */
  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER =
      LoopbackMiniCluster.withSlots(
          4,
          Map.of(
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
  void recoversFromAFailureWithExactResults() throws Exception {
    Map<String, String> conf = config(dir.resolve("checkpoints"), "100 ms");
    conf.put("restart-strategy.type", "fixed-delay");
    conf.put("restart-strategy.fixed-delay.attempts", "3");
    conf.put("restart-strategy.fixed-delay.delay", "200 ms");
    KeyedStateJob.failOnce = true;
    KeyedStateJob.build(conf, 2, N)
        .executeAsync("cobble-primary-failover")
        .getJobExecutionResult()
        .get(4, TimeUnit.MINUTES);
    assertThat(KeyedStateJob.FAILED).as("the injected failure happened").isTrue();
    KeyedStateJob.assertExactResults(N);
  }

  @Test
  void checkpointsUploadNothingLeakNothingAndTheOldestRetainedRestores() throws Exception {
    Path checkpoints = dir.resolve("checkpoints");
    Map<String, String> conf = config(checkpoints, "50 ms");
    conf.put("restart-strategy.type", "none");
    KeyedStateJob.hold = true;
    KeyedStateJob.blockAfterCheckpoints = CHECKPOINTS;
    JobClient job = KeyedStateJob.build(conf, 2, N).executeAsync("cobble-primary-retention");
    Path jobDir = checkpoints.resolve(job.getJobID().toString());
    Path shared = jobDir.resolve("shared");

    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    while (!KeyedStateJob.BLOCKED.get()) {
      assertThat(System.nanoTime())
          .as(
              "%d checkpoints within 3 minutes (%d so far)",
              CHECKPOINTS, KeyedStateJob.COMPLETED.get())
          .isLessThan(deadline);
      assertThat(job.getJobStatus().get().isGloballyTerminalState())
          .as("the job still runs while it holds its input")
          .isFalse();
      Thread.sleep(20);
    }
    // Cancel once the last checkpoint that may hold state completed (see
    // CobbleCheckpointRetentionIT: Flink ignores acknowledgements after cancellation).
    Path last = jobDir.resolve("chk-" + KeyedStateJob.LAST_BARRIER.get());
    long settled = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (!Files.exists(last.resolve("_metadata"))) {
      assertThat(System.nanoTime()).as("%s completes", last).isLessThan(settled);
      Thread.sleep(20);
    }
    JobEnd.cancel(job);
    KeyedStateJob.blockAfterCheckpoints = 0;

    // Flink discards subsumed checkpoints and the backend its own files asynchronously.
    List<Path> retained = completedCheckpoints(jobDir);
    Set<String> referenced = referencedFiles(retained, shared);
    Set<String> unreferenced = unreferenced(shared, referenced);
    long cleanup = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while ((retained.size() > RETAINED || !unreferenced.isEmpty()) && System.nanoTime() < cleanup) {
      Thread.sleep(100);
      retained = completedCheckpoints(jobDir);
      referenced = referencedFiles(retained, shared);
      unreferenced = unreferenced(shared, referenced);
    }
    assertThat(retained).as("the checkpoints retained on cancellation").hasSize(RETAINED);
    assertThat(unreferenced)
        .as("files under shared/ that no retained checkpoint references (leaked)")
        .isEmpty();
    assertThat(referenced).as("files the retained checkpoints reference").isNotEmpty();
    assertThat(files(shared))
        .as("every file a retained checkpoint references exists")
        .containsAll(referenced);

    KeyedStateJob.hold = false;
    Map<String, String> restore = config(checkpoints, "100 ms");
    restore.put("restart-strategy.type", "none");
    KeyedStateJob.restoreFrom(restore, retained.get(0).toUri().toString());
    KeyedStateJob.build(restore, 2, N)
        .executeAsync("cobble-primary-restore-oldest")
        .getJobExecutionResult()
        .get(3, TimeUnit.MINUTES);
    KeyedStateJob.assertExactResults(N);
  }

  private static Map<String, String> config(Path checkpoints, String interval) {
    Map<String, String> conf = KeyedStateJob.config(checkpoints.toUri().toString(), interval);
    conf.put("state.backend.cobble.localdir.primary-high-priority", "false");
    // A file an unconfirmed checkpoint holds is copied by the next one: the pause lets each
    // completion reach the backend before the next checkpoint starts, also on a loaded machine.
    conf.put("execution.checkpointing.min-pause", "200 ms");
    // Nothing inlined into _metadata: the meta file is a file of its own, like the engine files.
    conf.put("state.storage.fs.memory-threshold", "0");
    conf.put("execution.checkpointing.data-inline-threshold", "0");
    return conf;
  }

  private static List<Path> completedCheckpoints(Path jobDir) throws IOException {
    try (Stream<Path> dirs = Files.list(jobDir)) {
      return dirs.filter(p -> p.getFileName().toString().startsWith("chk-"))
          .filter(p -> Files.exists(p.resolve("_metadata")))
          .sorted(Comparator.comparingLong(CobbleCheckpointPrimaryIT::checkpointNumber))
          .collect(Collectors.toList());
    }
  }

  private static long checkpointNumber(Path checkpointDir) {
    return Long.parseLong(checkpointDir.getFileName().toString().substring("chk-".length()));
  }

  /**
   * The files under {@code shared/} (relative paths) that the checkpoints' keyed handles name,
   * checking that each is a working file in place and that the handle uploaded no data.
   */
  private static Set<String> referencedFiles(List<Path> checkpoints, Path shared)
      throws IOException {
    Set<String> names = new TreeSet<>();
    for (Path checkpoint : checkpoints) {
      CheckpointMetadata metadata;
      try (InputStream in = Files.newInputStream(checkpoint.resolve("_metadata"))) {
        metadata =
            Checkpoints.loadCheckpointMetadata(
                new DataInputStream(in),
                CobbleCheckpointPrimaryIT.class.getClassLoader(),
                checkpoint.toString());
      } catch (java.nio.file.NoSuchFileException e) {
        continue;
      }
      for (OperatorState operator : metadata.getOperatorStates()) {
        for (OperatorSubtaskState subtask : operator.getStates()) {
          for (KeyedStateHandle keyed : subtask.getManagedKeyedState()) {
            assertThat(keyed).isInstanceOf(IncrementalRemoteKeyedStateHandle.class);
            IncrementalRemoteKeyedStateHandle h = (IncrementalRemoteKeyedStateHandle) keyed;
            long files = 0;
            for (HandleAndLocalPath file : h.getSharedState()) {
              names.add(inPlace(file.getHandle(), shared, checkpoint));
              files += file.getHandle().getStateSize();
            }
            assertThat(h.getCheckpointedSize())
                .as("bytes %s uploaded: its meta file only (its files hold %d)", checkpoint, files)
                .isEqualTo(h.getStateSize() - files);
          }
        }
      }
    }
    return names;
  }

  private static String inPlace(StreamStateHandle handle, Path shared, Path checkpoint) {
    assertThat(handle).as("a shared file of %s", checkpoint).isInstanceOf(FileStateHandle.class);
    Path file = Paths.get(((FileStateHandle) handle).getFilePath().toUri().getPath());
    String relative = shared.relativize(file).toString().replace('\\', '/');
    assertThat(relative)
        .as("%s of %s is a working file in the shard's directory in shared/", file, checkpoint)
        .matches("cobble-[0-9a-f-]+/data/e[0-9]+-[0-9]+\\.(sst|vlog)");
    return relative;
  }

  private static Set<String> unreferenced(Path shared, Set<String> referenced) throws IOException {
    Set<String> extra = new TreeSet<>(files(shared));
    extra.removeAll(referenced);
    return extra;
  }

  /** Every regular file under {@code directory}, relative to it. */
  private static Set<String> files(Path directory) throws IOException {
    Set<String> names = new TreeSet<>();
    if (!Files.isDirectory(directory)) {
      return names;
    }
    try (Stream<Path> all = Files.walk(directory)) {
      all.filter(Files::isRegularFile)
          .forEach(p -> names.add(directory.relativize(p).toString().replace('\\', '/')));
    } catch (java.io.UncheckedIOException | java.nio.file.NoSuchFileException e) {
      // Removed while listed: the caller lists again.
    }
    return names;
  }
}
