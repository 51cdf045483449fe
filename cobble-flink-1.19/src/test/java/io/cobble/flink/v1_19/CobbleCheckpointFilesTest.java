package io.cobble.flink.v1_19;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.flink.state.TestBackends;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PlaceholderStreamStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStorageLocation;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What Cobble hands to Flink at checkpoints on a local file system: the engine's files are
 * hard-linked into the checkpoint's shared directory (no bytes copied), a later checkpoint refers
 * to files of a confirmed one by placeholders only, the files stay after the backend is gone (Flink
 * owns them), and a restore to the same key-group range reads them in place.
 */
class CobbleCheckpointFilesTest {

  private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 9);
  private static final ValueStateDescriptor<String> DESC =
      new ValueStateDescriptor<>("value", String.class);

  @TempDir Path dir;

  private TestBackends backends;

  @AfterEach
  void close() throws Exception {
    if (backends != null) {
      backends.close();
    }
  }

  @Test
  void checkpointsLinkNewFilesReferenceConfirmedOnesAndRestoreInPlace() throws Exception {
    backends = new TestBackends(dir.resolve("local"));
    CheckpointStorageAccess access =
        new FileSystemCheckpointStorage(
                new org.apache.flink.core.fs.Path(dir.resolve("checkpoints").toUri()), 0, -1)
            .createCheckpointStorage(new JobID());
    access.initializeBaseLocationsForCheckpoint();
    SharedStateRegistry registry = new SharedStateRegistryImpl();

    AbstractKeyedStateBackend<Integer> backend = backends.create(IntSerializer.INSTANCE, RANGE, 10);
    write(backend, 0, 500, "a");
    IncrementalRemoteKeyedStateHandle first = snapshot(backend, access, 1, registry);
    List<FileStateHandle> firstFiles = files(first);
    assertThat(firstFiles).isNotEmpty();
    for (FileStateHandle f : firstFiles) {
      Path p = Paths.get(f.getFilePath().toUri());
      // The engine's own file and the checkpoint's are one inode: nothing was copied.
      assertThat((Integer) Files.getAttribute(p, "unix:nlink")).isEqualTo(2);
    }
    backend.notifyCheckpointComplete(1);

    IncrementalRemoteKeyedStateHandle second = snapshot(backend, access, 2, registry);
    assertThat(second.getSharedState())
        .allMatch(h -> h.getHandle() instanceof FileStateHandle)
        .as("placeholders were replaced by the registered files")
        .hasSameSizeAs(first.getSharedState());
    assertThat(second.getCheckpointedSize())
        .as("nothing but the meta file is new")
        .isEqualTo(second.getMetaDataStateHandle().getStateSize());

    write(backend, 500, 800, "b");
    IncrementalRemoteKeyedStateHandle third = snapshot(backend, access, 3, registry);
    backend.dispose();
    for (FileStateHandle f : files(third)) {
      assertThat(Paths.get(f.getFilePath().toUri())).as("Flink owns its files").exists();
    }

    AbstractKeyedStateBackend<Integer> restored =
        backends.create(
            IntSerializer.INSTANCE, RANGE, 10, Collections.<KeyedStateHandle>singletonList(third));
    ValueState<String> state =
        restored.getPartitionedState(
            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, DESC);
    for (int k = 0; k < 800; k++) {
      restored.setCurrentKey(k);
      assertThat(state.value()).isEqualTo((k < 500 ? "a" : "b") + k);
    }
  }

  private static void write(AbstractKeyedStateBackend<Integer> backend, int from, int to, String p)
      throws Exception {
    ValueState<String> state =
        backend.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, DESC);
    for (int k = from; k < to; k++) {
      backend.setCurrentKey(k);
      state.update(p + k);
    }
  }

  private static IncrementalRemoteKeyedStateHandle snapshot(
      AbstractKeyedStateBackend<Integer> backend,
      CheckpointStorageAccess access,
      long id,
      SharedStateRegistry registry)
      throws Exception {
    FsCheckpointStorageLocation location =
        (FsCheckpointStorageLocation)
            access.resolveCheckpointStorageLocation(
                id, CheckpointStorageLocationReference.getDefault());
    RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
        backend.snapshot(id, id, location, CheckpointOptions.forCheckpointWithDefaultLocation());
    future.run();
    IncrementalRemoteKeyedStateHandle handle =
        (IncrementalRemoteKeyedStateHandle) future.get().getJobManagerOwnedSnapshot();
    if (id == 2) {
      long placeholders =
          handle.getSharedState().stream()
              .filter(h -> h.getHandle() instanceof PlaceholderStreamStateHandle)
              .count();
      assertThat(placeholders)
          .as("files of the confirmed checkpoint are referenced, not handed over again")
          .isGreaterThan(0);
    }
    handle.registerSharedStates(registry, id);
    return handle;
  }

  private static List<FileStateHandle> files(IncrementalRemoteKeyedStateHandle handle) {
    List<FileStateHandle> out = new ArrayList<>();
    for (HandleAndLocalPath h : handle.getSharedState()) {
      out.add((FileStateHandle) h.getHandle());
    }
    return out;
  }
}
