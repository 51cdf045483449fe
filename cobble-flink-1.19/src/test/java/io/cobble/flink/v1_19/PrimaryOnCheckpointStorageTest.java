package io.cobble.flink.v1_19;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.configuration.IllegalConfigurationException;
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
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code localdir.primary-high-priority: false}: the working files live in the checkpoint storage's
 * {@code shared/cobble-<id>/} and a checkpoint hands them over where they lie (no copy, no link,
 * only the meta file written); confirmed files come back as placeholders; after dispose only the
 * files handed to checkpoints remain (Flink's), the backend's manifests and unhanded files are
 * gone; a restore reads them with exact values; an aborted checkpoint that took live files fails
 * the next one; a checkpoint storage without files is rejected naming the key.
 */
class PrimaryOnCheckpointStorageTest {

  private static final String KEY = "state.backend.cobble.localdir.primary-high-priority";
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

  private CheckpointStorageAccess fileStorage() throws Exception {
    CheckpointStorageAccess access =
        new FileSystemCheckpointStorage(
                new org.apache.flink.core.fs.Path(dir.resolve("checkpoints").toUri()), 0, -1)
            .createCheckpointStorage(new JobID());
    access.initializeBaseLocationsForCheckpoint();
    return access;
  }

  @Test
  void checkpointsHandOverWorkingFilesInPlaceAndRestore() throws Exception {
    CheckpointStorageAccess access = fileStorage();
    backends = new TestBackends(dir.resolve("local")).with(KEY, "false").checkpointStorage(access);
    SharedStateRegistry registry = new SharedStateRegistryImpl();

    AbstractKeyedStateBackend<Integer> backend = backends.create(IntSerializer.INSTANCE, RANGE, 10);
    write(backend, 0, 500, "a");
    IncrementalRemoteKeyedStateHandle first = snapshot(backend, access, 1, registry);
    Path shared = sharedDir(access);
    List<Path> firstFiles = inPlaceFiles(first, shared);
    assertThat(firstFiles).isNotEmpty();
    for (Path p : firstFiles) {
      assertThat((Integer) Files.getAttribute(p, "unix:nlink"))
          .as("%s is the working file itself, not a link or copy", p)
          .isEqualTo(1);
    }
    assertThat(first.getCheckpointedSize())
        .as("only the meta file was written")
        .isEqualTo(first.getMetaDataStateHandle().getStateSize());
    backend.notifyCheckpointComplete(1);

    write(backend, 500, 800, "b");
    IncrementalRemoteKeyedStateHandle second = snapshot(backend, access, 2, registry);
    assertThat(second.getCheckpointedSize())
        .as("new files are handed over in place too")
        .isEqualTo(second.getMetaDataStateHandle().getStateSize());
    Set<String> handed = new TreeSet<>();
    for (IncrementalRemoteKeyedStateHandle h : List.of(first, second)) {
      for (Path p : inPlaceFiles(h, shared)) {
        handed.add(shared.relativize(p).toString());
      }
    }
    backend.dispose();
    assertThat(filesUnder(shared))
        .as("after dispose only the files handed to checkpoints remain (Flink owns them)")
        .isEqualTo(handed);

    AbstractKeyedStateBackend<Integer> restored =
        backends.create(
            IntSerializer.INSTANCE, RANGE, 10, Collections.<KeyedStateHandle>singletonList(second));
    ValueState<String> state =
        restored.getPartitionedState(
            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, DESC);
    for (int k = 0; k < 800; k++) {
      restored.setCurrentKey(k);
      assertThat(state.value()).isEqualTo((k < 500 ? "a" : "b") + k);
    }
    IncrementalRemoteKeyedStateHandle third = snapshot(restored, access, 3, registry);
    List<Path> thirdFiles = inPlaceFiles(third, shared);
    assertThat(thirdFiles).isNotEmpty();
    assertThat(thirdFiles.get(0).getParent().getParent())
        .as("the restored backend works in a directory of its own")
        .isNotEqualTo(inPlaceFiles(second, shared).get(0).getParent().getParent());
    assertThat(third.getCheckpointedSize())
        .isEqualTo(third.getMetaDataStateHandle().getStateSize());
  }

  @Test
  void anAbortedCheckpointThatTookLiveFilesFailsTheNext() throws Exception {
    CheckpointStorageAccess access = fileStorage();
    backends = new TestBackends(dir.resolve("local")).with(KEY, "false").checkpointStorage(access);
    AbstractKeyedStateBackend<Integer> backend = backends.create(IntSerializer.INSTANCE, RANGE, 10);
    write(backend, 0, 100, "a");
    snapshot(backend, access, 1, new SharedStateRegistryImpl());
    backend.notifyCheckpointAborted(1);
    write(backend, 100, 200, "b");
    assertThatThrownBy(() -> snapshot(backend, access, 2, new SharedStateRegistryImpl()))
        .satisfies(
            e ->
                assertThat(ExceptionUtils.findThrowableWithMessage(e, "checkpoint 1 was aborted"))
                    .isPresent());
  }

  @Test
  void aCheckpointStorageWithoutFilesIsRejectedNamingTheKey() throws Exception {
    CheckpointStorageAccess access =
        new JobManagerCheckpointStorage().createCheckpointStorage(new JobID());
    backends = new TestBackends(dir.resolve("local")).with(KEY, "false").checkpointStorage(access);
    Exception e =
        org.junit.jupiter.api.Assertions.assertThrows(
            Exception.class,
            () -> backends.create(IntSerializer.INSTANCE, new KeyGroupRange(0, 9), 10));
    IllegalConfigurationException cause =
        ExceptionUtils.findThrowable(e, IllegalConfigurationException.class)
            .orElseThrow(() -> new AssertionError("no IllegalConfigurationException", e));
    assertThat(cause.getMessage()).startsWith(KEY + ": false").contains("set the key to true");
  }

  @Test
  void trueOpens() throws Exception {
    backends = new TestBackends(dir).with(KEY, "true");
    assertThat(backends.create(IntSerializer.INSTANCE, new KeyGroupRange(0, 9), 10)).isNotNull();
  }

  private static Path sharedDir(CheckpointStorageAccess access) throws Exception {
    return Paths.get(
        ((org.apache.flink.runtime.state.filesystem.FsCheckpointStorageLocation)
                access.resolveCheckpointStorageLocation(
                    1, CheckpointStorageLocationReference.getDefault()))
            .getSharedStateDirectory()
            .toUri());
  }

  private static List<Path> inPlaceFiles(IncrementalRemoteKeyedStateHandle handle, Path shared) {
    List<Path> out = new ArrayList<>();
    for (HandleAndLocalPath h : handle.getSharedState()) {
      assertThat(h.getHandle()).isInstanceOf(FileStateHandle.class);
      Path p = Paths.get(((FileStateHandle) h.getHandle()).getFilePath().toUri());
      assertThat(shared.relativize(p).toString())
          .matches("cobble-[0-9a-f-]+/data/e[0-9]+-[0-9]+\\.(sst|vlog)");
      assertThat(p).exists();
      out.add(p);
    }
    return out;
  }

  private static Set<String> filesUnder(Path root) throws Exception {
    Set<String> out = new TreeSet<>();
    try (Stream<Path> all = Files.walk(root)) {
      all.filter(Files::isRegularFile).forEach(p -> out.add(root.relativize(p).toString()));
    }
    return out;
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
    RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
        backend.snapshot(
            id,
            id,
            access.resolveCheckpointStorageLocation(
                id, CheckpointStorageLocationReference.getDefault()),
            CheckpointOptions.forCheckpointWithDefaultLocation());
    future.run();
    IncrementalRemoteKeyedStateHandle handle =
        (IncrementalRemoteKeyedStateHandle) future.get().getJobManagerOwnedSnapshot();
    if (id == 2) {
      assertThat(handle.getSharedState())
          .as("files of the confirmed checkpoint are referenced by placeholders")
          .anyMatch(h -> h.getHandle() instanceof PlaceholderStreamStateHandle);
    }
    handle.registerSharedStates(registry, id);
    return handle;
  }
}
