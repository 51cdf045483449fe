package io.cobble.flink.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.Db;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
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
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rescale builds the new shard from the checkpoints' manifests and files, copying no row: a shard
 * cut from one checkpoint, or joined from several, holds exactly the state of its key groups, its
 * working directory holds no data file of its own (every file is a checkpoint's, used in place),
 * and its first checkpoint refers to all of them by placeholders that Flink's shared-state registry
 * accepts, so Flink keeps them while the new checkpoint needs them. Files holding other key groups
 * are cleaned up in the background only after Flink confirmed that checkpoint; the one after it
 * hands over the rewrites and restores exactly.
 */
class CobbleRescaleTest {

  private static final int KEY_GROUPS = 20;
  private static final int KEYS = 3000;
  private static final ValueStateDescriptor<String> VALUE =
      new ValueStateDescriptor<>("value", String.class);
  private static final ListStateDescriptor<Integer> LIST =
      new ListStateDescriptor<>("list", Integer.class);

  @TempDir Path dir;

  private TestBackends backends;
  private CheckpointStorageAccess access;
  private SharedStateRegistry registry;
  private List<KeyedStateHandle> sources;

  @BeforeEach
  void checkpointTwoShards() throws Exception {
    backends =
        new TestBackends(dir.resolve("local"))
            // Keep compaction out of the picture: files a compaction writes would be the shard's
            // own.
            .with("state.backend.cobble.compaction.l0-file-limit", "16")
            .with("state.backend.cobble.compaction.write-stall-limit", "20");
    access =
        new FileSystemCheckpointStorage(
                new org.apache.flink.core.fs.Path(dir.resolve("checkpoints").toUri()), 0, -1)
            .createCheckpointStorage(new JobID());
    access.initializeBaseLocationsForCheckpoint();
    registry = new SharedStateRegistryImpl();
    sources = new ArrayList<>();
    for (KeyGroupRange range :
        new KeyGroupRange[] {KeyGroupRange.of(0, 9), KeyGroupRange.of(10, 19)}) {
      AbstractKeyedStateBackend<Integer> b =
          backends.create(IntSerializer.INSTANCE, range, KEY_GROUPS);
      ValueState<String> value =
          b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUE);
      ListState<Integer> list =
          b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, LIST);
      for (int k = 0; k < KEYS; k++) {
        if (range.contains(KeyGroupRangeAssignment.assignToKeyGroup(k, KEY_GROUPS))) {
          b.setCurrentKey(k);
          value.update("v" + k);
          list.add(k);
          list.add(-k);
        }
      }
      sources.add(snapshot(b, 1));
      b.notifyCheckpointComplete(1);
    }
    // The source backends go away, as on a rescale; Flink's checkpoint files stay.
    backends.close();
  }

  @AfterEach
  void close() throws Exception {
    backends.close();
  }

  @Test
  void joinsTwoCheckpointsWithoutCopying() throws Exception {
    rescaleTo(KeyGroupRange.of(0, 19));
  }

  @Test
  void cutsAndJoinsAcrossTheBoundaryWithoutCopying() throws Exception {
    rescaleTo(KeyGroupRange.of(5, 14));
  }

  @Test
  void cutsOneCheckpointWithoutCopying() throws Exception {
    rescaleTo(KeyGroupRange.of(12, 16));
  }

  private void rescaleTo(KeyGroupRange range) throws Exception {
    AbstractKeyedStateBackend<Integer> b =
        backends.create(IntSerializer.INSTANCE, range, KEY_GROUPS, sources);
    ValueState<String> value =
        b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUE);
    ListState<Integer> list =
        b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, LIST);
    int owned = 0;
    for (int k = 0; k < KEYS; k++) {
      if (range.contains(KeyGroupRangeAssignment.assignToKeyGroup(k, KEY_GROUPS))) {
        b.setCurrentKey(k);
        assertThat(value.value()).isEqualTo("v" + k);
        assertThat(list.get()).containsExactly(k, -k);
        owned++;
      }
    }
    assertThat(owned).isGreaterThan(0);
    assertThat(b.getKeys(VALUE.getName(), VoidNamespace.INSTANCE).count())
        .as("rows of key groups outside %s stay invisible", range)
        .isEqualTo(owned);

    Db db = core(b).db();
    // Whatever background compaction would do before the first checkpoint is done by now.
    db.waitForCompactions();
    assertThat(ownDataFiles(dir.resolve("local")))
        .as("no row was copied, and no file read in place was cleaned up before Flink kept it")
        .isEmpty();
    int foreign = foreignFiles(db, range);
    assertThat(foreign > 0)
        .as("files hold key groups outside %s exactly when it cuts a checkpoint", range)
        .isEqualTo(!range.equals(KeyGroupRange.of(0, KEY_GROUPS - 1)));

    IncrementalRemoteKeyedStateHandle next = snapshotUnregistered(b, 2);
    assertThat(next.getSharedState())
        .as("every file of the rescaled shard is a restored checkpoint file")
        .isNotEmpty()
        .allMatch(h -> h.getHandle() instanceof PlaceholderStreamStateHandle);
    assertThat(next.getCheckpointedSize())
        .as("nothing but the meta file is uploaded")
        .isEqualTo(next.getMetaDataStateHandle().getStateSize());
    // The registry knows every placeholder's file (an unknown one fails the registration) and swaps
    // in the restored checkpoint's handle: the new checkpoint keeps those files alive.
    next.registerSharedStates(registry, 2);
    List<String> restoredFiles = new ArrayList<>();
    for (KeyedStateHandle s : sources) {
      for (HandleAndLocalPath h : ((IncrementalRemoteKeyedStateHandle) s).getSharedState()) {
        restoredFiles.add(((FileStateHandle) h.getHandle()).getFilePath().toString());
      }
    }
    for (HandleAndLocalPath h : next.getSharedState()) {
      assertThat(((FileStateHandle) h.getHandle()).getFilePath().toString()).isIn(restoredFiles);
    }

    // Once Flink confirmed checkpoint 2 it keeps those files for the shard, which may now rewrite
    // the ones holding other key groups; the next checkpoint hands over the rewrites and refers to
    // the rest by placeholders, and restores exactly.
    b.notifyCheckpointComplete(2);
    db.waitForCompactions();
    assertThat(foreignFiles(db, range)).as("background cleanup after checkpoint 2").isZero();
    IncrementalRemoteKeyedStateHandle third = snapshotUnregistered(b, 3);
    long rewritten =
        third.getSharedState().stream()
            .filter(h -> !(h.getHandle() instanceof PlaceholderStreamStateHandle))
            .count();
    assertThat(rewritten > 0).as("checkpoint 3 uploads cleaned-up files").isEqualTo(foreign > 0);
    third.registerSharedStates(registry, 3);
    b.notifyCheckpointComplete(3);
    AbstractKeyedStateBackend<Integer> again =
        backends.create(IntSerializer.INSTANCE, range, KEY_GROUPS, List.of(third));
    ValueState<String> value3 =
        again.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUE);
    ListState<Integer> list3 =
        again.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, LIST);
    for (int k = 0; k < KEYS; k++) {
      if (range.contains(KeyGroupRangeAssignment.assignToKeyGroup(k, KEY_GROUPS))) {
        again.setCurrentKey(k);
        assertThat(value3.value()).isEqualTo("v" + k);
        assertThat(list3.get()).containsExactly(k, -k);
      }
    }
    assertThat(again.getKeys(VALUE.getName(), VoidNamespace.INSTANCE).count()).isEqualTo(owned);
  }

  /** Live table files of {@code db} holding keys of key groups outside {@code range}. */
  private static int foreignFiles(Db db, KeyGroupRange range) {
    int foreign = 0;
    for (Tree t : db.versionSet().current().trees()) {
      for (FileMeta f : t.allFiles()) {
        if (!range.contains(Bytes.getShort(f.smallest(), 0))
            || !range.contains(Bytes.getShort(f.largest(), 0))) {
          foreign++;
        }
      }
    }
    return foreign;
  }

  private static CobbleKeyedStateCore<?> core(AbstractKeyedStateBackend<?> backend)
      throws Exception {
    Field f = backend.getClass().getDeclaredField("core");
    f.setAccessible(true);
    return (CobbleKeyedStateCore<?>) f.get(backend);
  }

  /** Data files in any working directory of a Cobble backend, outside the staged checkpoints. */
  private static List<Path> ownDataFiles(Path localDir) throws Exception {
    try (Stream<Path> files = Files.walk(localDir)) {
      return files
          .filter(p -> p.toString().endsWith(".sst") || p.toString().endsWith(".vlog"))
          .filter(p -> !p.toString().contains("/restored/"))
          .collect(Collectors.toList());
    }
  }

  private IncrementalRemoteKeyedStateHandle snapshot(AbstractKeyedStateBackend<Integer> b, long id)
      throws Exception {
    IncrementalRemoteKeyedStateHandle handle = snapshotUnregistered(b, id);
    handle.registerSharedStates(registry, id);
    for (HandleAndLocalPath h : handle.getSharedState()) {
      assertThat(Paths.get(((FileStateHandle) h.getHandle()).getFilePath().toUri())).exists();
    }
    return handle;
  }

  private IncrementalRemoteKeyedStateHandle snapshotUnregistered(
      AbstractKeyedStateBackend<Integer> b, long id) throws Exception {
    FsCheckpointStorageLocation location =
        (FsCheckpointStorageLocation)
            access.resolveCheckpointStorageLocation(
                id, CheckpointStorageLocationReference.getDefault());
    RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
        b.snapshot(id, id, location, CheckpointOptions.forCheckpointWithDefaultLocation());
    future.run();
    return (IncrementalRemoteKeyedStateHandle) future.get().getJobManagerOwnedSnapshot();
  }
}
