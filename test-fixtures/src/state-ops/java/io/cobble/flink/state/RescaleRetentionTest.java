package io.cobble.flink.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.Db;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.util.Bytes;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Collectors;
import java.util.stream.Stream;
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
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyedStateHandle;
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
 * After a rescale, the source checkpoints' files are retained file by file: each checkpoint of the
 * new shard refers to exactly the source files its shard still reads, so once compaction has
 * rewritten one, Flink's shared state registry deletes it when no retained checkpoint needs it,
 * while the untouched files of the same source stay referenced and on disk. The shard itself keeps
 * (hard links or copies of) only the source files it still reads. Every retained checkpoint
 * restores exactly.
 */
class RescaleRetentionTest {

  private static final int KEY_GROUPS = 20;
  private static final int KEYS = 4000;
  private static final KeyGroupRange TARGET = KeyGroupRange.of(5, 14);
  private static final ValueStateDescriptor<String> VALUE =
      new ValueStateDescriptor<>("value", String.class);

  /**
   * The key groups each source writes per checkpoint, one table file each: source 0-9 writes {0-2},
   * {3-6}, {7-9}; source 10-19 writes {10-12}, {13-16}, {17-19}.
   */
  private static final int[][][] BATCHES = {
    {{0, 2}, {3, 6}, {7, 9}},
    {{10, 12}, {13, 16}, {17, 19}}
  };

  @TempDir Path dir;

  private TestBackends backends;

  @AfterEach
  void close() throws Exception {
    if (backends != null) {
      backends.close();
    }
  }

  @Test
  void sourceFilesAreRetainedFileByFile() throws Exception {
    backends =
        new TestBackends(dir.resolve("local"))
            // Only the cleanup of given-up key groups rewrites files here: no level compaction.
            .with("state.backend.cobble.compaction.l0-file-limit", "16")
            .with("state.backend.cobble.compaction.write-stall-limit", "20");
    CheckpointStorageAccess access =
        new FileSystemCheckpointStorage(
                new org.apache.flink.core.fs.Path(dir.resolve("checkpoints").toUri()), 0, -1)
            .createCheckpointStorage(new JobID());
    access.initializeBaseLocationsForCheckpoint();
    SharedStateRegistry registry = new SharedStateRegistryImpl();

    // The old job: two subtasks, three checkpoints each, one table file per checkpoint.
    List<KeyedStateHandle> sources = new ArrayList<>();
    for (int s = 0; s < 2; s++) {
      KeyGroupRange range = KeyGroupRange.of(s * 10, s * 10 + 9);
      AbstractKeyedStateBackend<Integer> b =
          backends.create(IntSerializer.INSTANCE, range, KEY_GROUPS);
      ValueState<String> value = value(b);
      IncrementalRemoteKeyedStateHandle last = null;
      for (int c = 0; c < 3; c++) {
        for (int k = 0; k < KEYS; k++) {
          int kg = keyGroup(k);
          if (kg >= BATCHES[s][c][0] && kg <= BATCHES[s][c][1]) {
            b.setCurrentKey(k);
            value.update("v" + k);
          }
        }
        last = snapshot(b, access, c + 1);
        last.registerSharedStates(registry, c + 1);
        b.notifyCheckpointComplete(c + 1);
      }
      sources.add(last);
    }
    backends.close();
    // What Flink's registry does once the old job's checkpoints 1 and 2 are subsumed by 3.
    registry.unregisterUnusedState(3);

    Map<String, int[]> spans = new HashMap<>();
    for (KeyedStateHandle h : sources) {
      spans.putAll(spansOf((IncrementalRemoteKeyedStateHandle) h));
    }
    assertThat(spans).as("three table files per source").hasSize(6);
    Set<String> overlapping = filesWhere(spans, span -> span[0] <= 14 && span[1] >= 5);
    Set<String> inside = filesWhere(spans, span -> span[0] >= 5 && span[1] <= 14);
    assertThat(overlapping).hasSize(4);
    assertThat(inside).hasSize(2);
    assertThat(onDisk(spans.keySet())).isEqualTo(spans.keySet());

    // The new job (CLAIM): subtask of key groups 5-14, cut and joined from both checkpoints.
    AbstractKeyedStateBackend<Integer> b =
        backends.create(IntSerializer.INSTANCE, TARGET, KEY_GROUPS, sources);
    Db db = core(b).db();
    assertThat(stagedFiles())
        .as("only the source files with key groups 5-14 are staged")
        .hasSize(overlapping.size());
    IncrementalRemoteKeyedStateHandle first = snapshot(b, access, 4);
    first.registerSharedStates(registry, 4);
    assertThat(referencedSourceFiles(first, spans.keySet()))
        .as("checkpoint 4 refers to every source file holding key groups 5-14")
        .isEqualTo(overlapping);
    b.notifyCheckpointComplete(4);
    registry.unregisterUnusedState(4);
    assertThat(onDisk(spans.keySet()))
        .as("the registry deleted the source files holding none of key groups 5-14")
        .isEqualTo(overlapping);

    // Flink keeps the files for the shard now, so it cleans up the two that also hold key groups
    // it does not own; the two inside 5-14 stay as they are.
    db.waitForCompactions();
    IncrementalRemoteKeyedStateHandle second = snapshot(b, access, 5);
    second.registerSharedStates(registry, 5);
    assertThat(referencedSourceFiles(second, spans.keySet()))
        .as("checkpoint 5 refers to exactly the source files compaction did not rewrite")
        .isEqualTo(inside);
    b.notifyCheckpointComplete(5);
    // One more manifest (a checkpoint that flushes a write) and the fallback manifest no longer
    // names the rewritten files either.
    ValueState<String> value = value(b);
    int key = firstKeyIn(TARGET);
    b.setCurrentKey(key);
    value.update("v" + key);
    IncrementalRemoteKeyedStateHandle third = snapshot(b, access, 6);
    third.registerSharedStates(registry, 6);
    b.notifyCheckpointComplete(6);
    db.versionSet().awaitDeletions();
    assertThat(stagedFiles())
        .as("the shard keeps only the staged source files it still reads")
        .hasSize(inside.size());

    // Checkpoints 4 to 6 retained: 4 still needs the rewritten files, so they stay.
    registry.unregisterUnusedState(4);
    assertThat(onDisk(spans.keySet())).isEqualTo(overlapping);
    checkRestores(first);
    checkRestores(second);
    checkRestores(third);
    // Checkpoint 4 subsumed: the rewritten files go, the others stay for checkpoints 5 and 6.
    registry.unregisterUnusedState(5);
    assertThat(onDisk(spans.keySet())).isEqualTo(inside);
    checkRestores(second);
    checkRestores(third);
  }

  private static int firstKeyIn(KeyGroupRange range) {
    int k = 0;
    while (!range.contains(keyGroup(k))) {
      k++;
    }
    return k;
  }

  private void checkRestores(IncrementalRemoteKeyedStateHandle checkpoint) throws Exception {
    AbstractKeyedStateBackend<Integer> again =
        backends.create(IntSerializer.INSTANCE, TARGET, KEY_GROUPS, List.of(checkpoint));
    ValueState<String> value = value(again);
    int owned = 0;
    for (int k = 0; k < KEYS; k++) {
      if (TARGET.contains(keyGroup(k))) {
        again.setCurrentKey(k);
        assertThat(value.value()).isEqualTo("v" + k);
        owned++;
      }
    }
    assertThat(again.getKeys(VALUE.getName(), VoidNamespace.INSTANCE).count()).isEqualTo(owned);
  }

  private static ValueState<String> value(AbstractKeyedStateBackend<Integer> b) throws Exception {
    return b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUE);
  }

  private static int keyGroup(int key) {
    return KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS);
  }

  /** The key groups (first, last) of each table file of a checkpoint, by its file path. */
  private static Map<String, int[]> spansOf(IncrementalRemoteKeyedStateHandle h) throws Exception {
    SnapshotMeta meta;
    try (InputStream in = h.getMetaDataStateHandle().openInputStream()) {
      meta = SnapshotMeta.read(in, RescaleRetentionTest.class.getClassLoader(), "meta");
    }
    Map<String, String> paths = new HashMap<>();
    for (HandleAndLocalPath f : h.getSharedState()) {
      paths.put(f.getLocalPath(), pathOf(f));
    }
    Map<String, int[]> spans = new HashMap<>();
    for (SnapshotFile f : meta.shard.files()) {
      if (!f.isVlog()) {
        spans.put(
            paths.get(f.volumePath()),
            new int[] {
              Bytes.getShort(f.properties().smallest(), 0),
              Bytes.getShort(f.properties().largest(), 0)
            });
      }
    }
    return spans;
  }

  private static Set<String> filesWhere(
      Map<String, int[]> spans, java.util.function.Predicate<int[]> test) {
    return spans.entrySet().stream()
        .filter(e -> test.test(e.getValue()))
        .map(Map.Entry::getKey)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /** The source files a registered checkpoint refers to (placeholders resolved by the registry). */
  private static Set<String> referencedSourceFiles(
      IncrementalRemoteKeyedStateHandle h, Set<String> sourceFiles) {
    Set<String> out = new TreeSet<>();
    for (HandleAndLocalPath f : h.getSharedState()) {
      String path = pathOf(f);
      if (sourceFiles.contains(path)) {
        out.add(path);
      }
    }
    return out;
  }

  private static String pathOf(HandleAndLocalPath f) {
    return ((FileStateHandle) f.getHandle()).getFilePath().toUri().getPath();
  }

  private static Set<String> onDisk(Set<String> files) {
    return files.stream()
        .filter(p -> Files.exists(Paths.get(p)))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /** Source files staged (linked or copied) in the backends' working directories. */
  private Set<Path> stagedFiles() throws Exception {
    try (Stream<Path> files = Files.walk(dir.resolve("local"))) {
      return files
          .filter(p -> p.toString().contains("/" + CobbleRestore.VOLUME_DIR + "/"))
          .filter(p -> p.toString().endsWith(".sst") || p.toString().endsWith(".vlog"))
          .collect(Collectors.toCollection(HashSet::new));
    }
  }

  private static CobbleKeyedStateCore<?> core(AbstractKeyedStateBackend<?> backend)
      throws Exception {
    Field f = backend.getClass().getDeclaredField("core");
    f.setAccessible(true);
    return (CobbleKeyedStateCore<?>) f.get(backend);
  }

  private static IncrementalRemoteKeyedStateHandle snapshot(
      AbstractKeyedStateBackend<Integer> b, CheckpointStorageAccess access, long id)
      throws Exception {
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
