package io.cobble.flink.v1_19;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cobble.flink.state.CobbleKeyedStateCore;
import io.cobble.flink.state.TestBackends;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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
      assertThat(state.value()).isEqualTo(value(k < 500 ? "a" : "b", k));
    }
    write(restored, 800, 900, "c");
    IncrementalRemoteKeyedStateHandle third = take(restored, access, 3);
    List<Path> thirdFiles = new ArrayList<>();
    for (HandleAndLocalPath h : third.getSharedState()) {
      if (h.getHandle() instanceof FileStateHandle) {
        thirdFiles.add(Paths.get(((FileStateHandle) h.getHandle()).getFilePath().toUri()));
      }
    }
    assertThat(thirdFiles).as("files written after the restore are handed over").isNotEmpty();
    for (Path p : thirdFiles) {
      assertThat(p.getParent().getParent())
          .as("the restored backend writes into a directory of its own")
          .isNotEqualTo(inPlaceFiles(second, shared).get(0).getParent().getParent());
    }
    assertThat(third.getCheckpointedSize())
        .isEqualTo(third.getMetaDataStateHandle().getStateSize());
  }

  @Test
  void aSameRangeRestoreResumesOnTheCheckpointsFilesWhereTheyLie() throws Exception {
    CheckpointStorageAccess access = fileStorage();
    Path local = dir.resolve("local");
    // No compaction starts by itself, so the bytes the restore writes locally are its own.
    backends =
        new TestBackends(local)
            .with(KEY, "false")
            .with("state.backend.cobble.compaction.l0-file-limit", "20")
            .checkpointStorage(access);
    SharedStateRegistry registry = new SharedStateRegistryImpl();
    AbstractKeyedStateBackend<Integer> backend = backends.create(IntSerializer.INSTANCE, RANGE, 10);
    write(backend, 0, 12_000, "a");
    snapshot(backend, access, 1, registry);
    backend.notifyCheckpointComplete(1);
    write(backend, 12_000, 20_000, "b");
    IncrementalRemoteKeyedStateHandle second = snapshot(backend, access, 2, registry);
    backend.notifyCheckpointComplete(2);
    registry.unregisterUnusedState(2);
    backend.dispose();

    Path shared = sharedDir(access);
    Map<Path, Object> inodes = new HashMap<>();
    long dataBytes = 0;
    for (Path p : inPlaceFiles(second, shared)) {
      inodes.put(p, Files.getAttribute(p, "unix:ino"));
      dataBytes += Files.size(p);
    }
    Map<String, Long> sharedBefore = sizesUnder(shared);
    Map<String, Long> localBefore = sizesUnder(local);

    AbstractKeyedStateBackend<Integer> restored =
        backends.create(
            IntSerializer.INSTANCE, RANGE, 10, Collections.<KeyedStateHandle>singletonList(second));

    Map<String, Long> sharedWritten = written(sharedBefore, sizesUnder(shared));
    assertThat(sharedWritten.keySet())
        .as("the restore writes only the engine's metadata, in a directory of its own")
        .isNotEmpty()
        .allMatch(n -> n.matches("cobble-[0-9a-f-]+/(manifests/MANIFEST-.*|CURRENT|LEASE|RANGES)"));
    for (Map.Entry<Path, Object> f : inodes.entrySet()) {
      assertThat((Integer) Files.getAttribute(f.getKey(), "unix:nlink"))
          .as("%s is neither linked nor copied", f.getKey())
          .isEqualTo(1);
      assertThat(Files.getAttribute(f.getKey(), "unix:ino")).isEqualTo(f.getValue());
    }
    Map<String, Long> localFiles = written(localBefore, sizesUnder(local));
    long localWritten = localFiles.values().stream().mapToLong(l -> l).sum();
    assertThat(localWritten)
        .as(
            "the local directory only caches the metadata read at open (%s data bytes): %s",
            dataBytes, localFiles)
        .isLessThan(dataBytes / 2);
    assertValues(restored, 0, 12_000, "a");
    assertValues(restored, 12_000, 20_000, "b");

    write(restored, 20_000, 20_100, "c");
    IncrementalRemoteKeyedStateHandle third = take(restored, access, 3);
    long placeholders =
        third.getSharedState().stream()
            .filter(h -> h.getHandle() instanceof PlaceholderStreamStateHandle)
            .count();
    assertThat(placeholders)
        .as("every restored file is referred to, not handed over again")
        .isEqualTo(second.getSharedState().size());
    third.registerSharedStates(registry, 3);
    Set<Path> thirdFiles = new HashSet<>(paths(third));
    assertThat(thirdFiles)
        .as("the placeholders resolve to the checkpoint's own files")
        .containsAll(inodes.keySet());
    restored.notifyCheckpointComplete(3);
    registry.unregisterUnusedState(3);

    CobbleKeyedStateCore<?> core = core(restored);
    core.db().compactAll();
    core.db().waitForCompactions();
    for (Path p : inodes.keySet()) {
      assertThat(p)
          .as("compaction retired the restored file, but it is Flink's to delete")
          .exists();
    }
    IncrementalRemoteKeyedStateHandle fourth = snapshot(restored, access, 4, registry);
    restored.notifyCheckpointComplete(4);
    registry.unregisterUnusedState(4);
    Set<Path> fourthFiles = new HashSet<>(paths(fourth));
    for (Path p : inodes.keySet()) {
      if (!fourthFiles.contains(p)) {
        assertThat(p)
            .as("Flink's registry deleted the restored file no checkpoint needs")
            .doesNotExist();
      }
    }
    assertValues(restored, 0, 12_000, "a");
    assertValues(restored, 12_000, 20_000, "b");
    assertValues(restored, 20_000, 20_100, "c");
    restored.dispose();
    Set<String> expected = new TreeSet<>();
    fourthFiles.forEach(p -> expected.add(shared.relativize(p).toString()));
    assertThat(sizesUnder(shared).keySet())
        .as("after dispose exactly the retained checkpoint's files remain: none leaked or missing")
        .isEqualTo(expected);

    AbstractKeyedStateBackend<Integer> again =
        backends.create(
            IntSerializer.INSTANCE, RANGE, 10, Collections.<KeyedStateHandle>singletonList(fourth));
    assertValues(again, 0, 12_000, "a");
    assertValues(again, 12_000, 20_000, "b");
    assertValues(again, 20_000, 20_100, "c");
  }

  private static CobbleKeyedStateCore<?> core(AbstractKeyedStateBackend<?> backend)
      throws Exception {
    Field f = backend.getClass().getDeclaredField("core");
    f.setAccessible(true);
    return (CobbleKeyedStateCore<?>) f.get(backend);
  }

  private static List<Path> paths(IncrementalRemoteKeyedStateHandle handle) {
    List<Path> out = new ArrayList<>();
    for (HandleAndLocalPath h : handle.getSharedState()) {
      out.add(Paths.get(((FileStateHandle) h.getHandle()).getFilePath().toUri()));
    }
    return out;
  }

  private static Map<String, Long> sizesUnder(Path root) throws Exception {
    Map<String, Long> out = new TreeMap<>();
    if (!Files.exists(root)) {
      return out;
    }
    // The cache writes chunks in the background: files may vanish while the tree is walked.
    Files.walkFileTree(
        root,
        new SimpleFileVisitor<Path>() {
          @Override
          public FileVisitResult visitFile(Path p, BasicFileAttributes attrs) {
            if (attrs.isRegularFile()) {
              out.put(root.relativize(p).toString(), attrs.size());
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path p, IOException e) {
            return FileVisitResult.CONTINUE;
          }
        });
    return out;
  }

  /** Files new or grown since {@code before}, with the bytes written to them. */
  private static Map<String, Long> written(Map<String, Long> before, Map<String, Long> after) {
    Map<String, Long> out = new TreeMap<>();
    after.forEach(
        (n, size) -> {
          long grown = size - before.getOrDefault(n, 0L);
          if (grown > 0) {
            out.put(n, grown);
          }
        });
    return out;
  }

  private static void assertValues(
      AbstractKeyedStateBackend<Integer> backend, int from, int to, String p) throws Exception {
    ValueState<String> state =
        backend.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, DESC);
    for (int k = from; k < to; k++) {
      backend.setCurrentKey(k);
      assertThat(state.value()).isEqualTo(value(p, k));
    }
  }

  private static String value(String p, int k) {
    // Incompressible enough that data files dwarf their metadata.
    return p + k + "-" + Long.toHexString(k * 0x9E3779B97F4A7C15L) + Long.toHexString(~k * 31L);
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
      state.update(value(p, k));
    }
  }

  private static IncrementalRemoteKeyedStateHandle snapshot(
      AbstractKeyedStateBackend<Integer> backend,
      CheckpointStorageAccess access,
      long id,
      SharedStateRegistry registry)
      throws Exception {
    IncrementalRemoteKeyedStateHandle handle = take(backend, access, id);
    if (id == 2) {
      assertThat(handle.getSharedState())
          .as("files of the confirmed checkpoint are referenced by placeholders")
          .anyMatch(h -> h.getHandle() instanceof PlaceholderStreamStateHandle);
    }
    handle.registerSharedStates(registry, id);
    return handle;
  }

  /** Checkpoint {@code id} as the backend hands it over, not registered yet. */
  private static IncrementalRemoteKeyedStateHandle take(
      AbstractKeyedStateBackend<Integer> backend, CheckpointStorageAccess access, long id)
      throws Exception {
    RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
        backend.snapshot(
            id,
            id,
            access.resolveCheckpointStorageLocation(
                id, CheckpointStorageLocationReference.getDefault()),
            CheckpointOptions.forCheckpointWithDefaultLocation());
    future.run();
    return (IncrementalRemoteKeyedStateHandle) future.get().getJobManagerOwnedSnapshot();
  }
}
