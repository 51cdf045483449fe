package io.cobble.flink.v1_19;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.Db;
import io.cobble.FsyncPolicy;
import io.cobble.flink.state.CobbleKeyedStateCore;
import io.cobble.flink.state.TestBackends;
import java.io.File;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStorageLocation;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state backend's shard writes its working files without fsync ({@code fsync.policy=snapshot})
 * and fsyncs the files a checkpoint hard-links before the checkpoint completes. A child JVM appends
 * list batches and map entries and checkpoints in rounds, checking after each checkpoint that none
 * of its files still waits for an fsync, until it is killed (SIGKILL) at a random moment; the last
 * completed checkpoint then restores exactly the rows of its round.
 */
class DeferredFsyncCrashTest {
  private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 9);
  private static final int KEYS = 400;
  private static final int BATCH = 20;
  private static final ListStateDescriptor<Long> LIST =
      new ListStateDescriptor<>("list", LongSerializer.INSTANCE);
  private static final MapStateDescriptor<Long, Long> MAP =
      new MapStateDescriptor<>("map", LongSerializer.INSTANCE, LongSerializer.INSTANCE);

  @TempDir Path tmp;

  private static TestBackends backends(Path local) {
    // Small memtables: every round flushes and compacts, so the files a checkpoint links are
    // fresh, unsynced flush and compaction outputs.
    return new TestBackends(local)
        .with("state.backend.cobble.memory.fixed-per-slot", "1mb")
        .with("state.backend.cobble.memory.memtable-buffer-count", "2");
  }

  private static CheckpointStorageAccess storage(Path checkpoints) throws Exception {
    CheckpointStorageAccess access =
        new FileSystemCheckpointStorage(
                new org.apache.flink.core.fs.Path(checkpoints.toUri()), 0, -1)
            .createCheckpointStorage(new JobID(0, 1));
    access.initializeBaseLocationsForCheckpoint();
    return access;
  }

  private static long element(long key, long round, int i) {
    return key * 1_000_000 + round * 1_000 + i;
  }

  /** Child: rounds of appends and puts, each ending in a checkpoint; runs until killed. */
  public static void main(String[] args) throws Exception {
    Path handles = Path.of(args[2]);
    CheckpointStorageAccess access = storage(Path.of(args[1]));
    SharedStateRegistry registry = new SharedStateRegistryImpl();
    try (TestBackends backends = backends(Path.of(args[0]))) {
      AbstractKeyedStateBackend<Long> backend = backends.create(LongSerializer.INSTANCE, RANGE, 10);
      Db db = db(backend);
      if (db.config().fsyncPolicy() != FsyncPolicy.SNAPSHOT) {
        throw new AssertionError("the state backend's shard defers fsyncs to its checkpoints");
      }
      ListState<Long> list =
          backend.getPartitionedState(
              VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, LIST);
      MapState<Long, Long> map =
          backend.getPartitionedState(
              VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, MAP);
      for (long round = 1; ; round++) {
        for (long k = 0; k < KEYS; k++) {
          backend.setCurrentKey(k);
          List<Long> batch = new ArrayList<>();
          for (int i = 0; i < BATCH; i++) {
            batch.add(element(k, round, i));
          }
          list.addAll(batch);
          Map<Long, Long> entries = new HashMap<>();
          entries.put(round, k + round);
          entries.put(-round, k - round);
          map.putAll(entries);
        }
        FsCheckpointStorageLocation location =
            (FsCheckpointStorageLocation)
                access.resolveCheckpointStorageLocation(
                    round, CheckpointStorageLocationReference.getDefault());
        RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
            backend.snapshot(
                round, round, location, CheckpointOptions.forCheckpointWithDefaultLocation());
        future.run();
        IncrementalRemoteKeyedStateHandle handle =
            (IncrementalRemoteKeyedStateHandle) future.get().getJobManagerOwnedSnapshot();
        Set<Long> waiting = db.filesAwaitingSync();
        for (HandleAndLocalPath f : handle.getSharedState()) {
          long number = Long.parseLong(f.getLocalPath().substring(0, 6));
          if (waiting.contains(number)) {
            throw new AssertionError("checkpoint " + round + " links unsynced " + f.getLocalPath());
          }
        }
        // What the checkpoint coordinator does: placeholders resolve to the registered files.
        handle.registerSharedStates(registry, round);
        backend.notifyCheckpointComplete(round);
        Path temp = handles.resolve("handle.tmp");
        try (ObjectOutputStream out = new ObjectOutputStream(Files.newOutputStream(temp))) {
          out.writeObject(handle);
        }
        Files.move(temp, handles.resolve("handle-" + round), StandardCopyOption.ATOMIC_MOVE);
      }
    }
  }

  private static Db db(AbstractKeyedStateBackend<?> backend) throws Exception {
    Field core = backend.getClass().getDeclaredField("core");
    core.setAccessible(true);
    return ((CobbleKeyedStateCore<?>) core.get(backend)).db();
  }

  private static long lastRound(Path handles) throws Exception {
    try (Stream<Path> files = Files.list(handles)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.startsWith("handle-"))
          .mapToLong(n -> Long.parseLong(n.substring("handle-".length())))
          .max()
          .orElse(0);
    }
  }

  @Test
  void theLastCompletedCheckpointRestoresExactlyAfterAKill() throws Exception {
    Path handles = Files.createDirectories(tmp.resolve("handles"));
    Path checkpoints = tmp.resolve("checkpoints");
    Process child =
        new ProcessBuilder(
                System.getProperty("java.home") + File.separator + "bin" + File.separator + "java",
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                DeferredFsyncCrashTest.class.getName(),
                tmp.resolve("local").toString(),
                checkpoints.toString(),
                handles.toString())
            .redirectErrorStream(true)
            .redirectOutput(tmp.resolve("child.log").toFile())
            .start();
    long killedAfter;
    try {
      // Some checkpoints complete, however slow the machine; then one more may be under way.
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
      while (lastRound(handles) < 3 && System.nanoTime() < deadline) {
        assertThat(child.isAlive())
            .as("child died on its own: %s", Files.readString(tmp.resolve("child.log")))
            .isTrue();
        Thread.sleep(20);
      }
      assertThat(lastRound(handles)).as("checkpoints completed in 3 minutes").isGreaterThan(2);
      Thread.sleep(new java.util.Random().nextInt(300));
      assertThat(child.isAlive())
          .as("child died on its own: %s", Files.readString(tmp.resolve("child.log")))
          .isTrue();
    } finally {
      child.destroyForcibly();
      assertThat(child.waitFor(1, TimeUnit.MINUTES)).as("the killed child exits").isTrue();
    }
    killedAfter = lastRound(handles);
    IncrementalRemoteKeyedStateHandle handle;
    try (ObjectInputStream in =
        new ObjectInputStream(Files.newInputStream(handles.resolve("handle-" + killedAfter)))) {
      handle = (IncrementalRemoteKeyedStateHandle) in.readObject();
    }
    try (TestBackends backends = backends(tmp.resolve("restored"))) {
      AbstractKeyedStateBackend<Long> restored =
          backends.create(
              LongSerializer.INSTANCE,
              RANGE,
              10,
              Collections.<KeyedStateHandle>singletonList(handle));
      ListState<Long> list =
          restored.getPartitionedState(
              VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, LIST);
      MapState<Long, Long> map =
          restored.getPartitionedState(
              VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, MAP);
      for (long k = 0; k < KEYS; k++) {
        restored.setCurrentKey(k);
        List<Long> want = new ArrayList<>();
        Map<Long, Long> wantMap = new HashMap<>();
        for (long r = 1; r <= killedAfter; r++) {
          for (int i = 0; i < BATCH; i++) {
            want.add(element(k, r, i));
          }
          wantMap.put(r, k + r);
          wantMap.put(-r, k - r);
        }
        List<Long> got = new ArrayList<>();
        list.get().forEach(got::add);
        assertThat(got).as("list of key %s after round %s", k, killedAfter).isEqualTo(want);
        Map<Long, Long> gotMap = new HashMap<>();
        for (Map.Entry<Long, Long> e : map.entries()) {
          gotMap.put(e.getKey(), e.getValue());
        }
        assertThat(gotMap).as("map of key %s after round %s", k, killedAfter).isEqualTo(wantMap);
      }
    }
  }
}
