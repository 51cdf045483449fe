package io.cobble.flink.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.cobble.Db;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SavepointResources;
import org.apache.flink.runtime.state.SavepointSnapshotStrategy;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategyRunner;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendLoader;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A canonical savepoint holds the state as of its synchronous phase: Flink's runner returns the
 * snapshot future unfinished, the test then overwrites, deletes, appends and adds keys (and a new
 * state), flushes and compacts the shard, and only then runs the future. The savepoint restored
 * into a fresh Cobble backend and into RocksDB holds exactly the state before the sync point.
 *
 * <p>One source for every Flink line that builds backends on {@code MockEnvironment}: each line
 * adds this directory to its test sources; both backends are loaded by name, as a cluster loads
 * them.
 */
class CanonicalSavepointPointInTimeTest {
  private static final int KEY_GROUPS = 32;
  private static final int KEYS = 200;

  private static final ValueStateDescriptor<Long> VALUE =
      new ValueStateDescriptor<>("value", LongSerializer.INSTANCE);
  private static final ListStateDescriptor<Long> LIST =
      new ListStateDescriptor<>("list", LongSerializer.INSTANCE);
  private static final MapStateDescriptor<Integer, String> MAP =
      new MapStateDescriptor<>("map", IntSerializer.INSTANCE, StringSerializer.INSTANCE);
  private static final ValueStateDescriptor<Long> LATE =
      new ValueStateDescriptor<>("registered-after-the-sync-point", LongSerializer.INSTANCE);

  @TempDir Path dir;

  @Test
  void restoresIntoCobbleTheStateAsOfTheSyncPhase() throws Exception {
    assertRestoredStateIsTheSyncPoint(cobble());
  }

  @Test
  void restoresIntoRocksDbTheStateAsOfTheSyncPhase() throws Exception {
    Configuration config = new Configuration();
    config.setString("state.backend.type", "rocksdb");
    assertRestoredStateIsTheSyncPoint(load(config));
  }

  private void assertRestoredStateIsTheSyncPoint(StateBackend target) throws Exception {
    Map<Integer, Long> values = new HashMap<>();
    Map<Integer, List<Long>> lists = new HashMap<>();
    Map<Integer, Map<Integer, String>> maps = new HashMap<>();
    KeyedStateHandle savepoint;
    try (MockEnvironment env = env()) {
      AbstractKeyedStateBackend<Integer> source = create(env, cobble(), Collections.emptyList());
      try {
        ValueState<Long> value = TestBackends.voidState(source, VALUE);
        ListState<Long> list = TestBackends.voidState(source, LIST);
        MapState<Integer, String> map = TestBackends.voidState(source, MAP);
        for (int k = 0; k < KEYS; k++) {
          source.setCurrentKey(k);
          value.update((long) k);
          values.put(k, (long) k);
          List<Long> elements = new ArrayList<>();
          for (long e = 0; e <= k % 3; e++) {
            list.add(k * 10 + e);
            elements.add(k * 10 + e);
          }
          lists.put(k, elements);
          map.put(1, "one-" + k);
          map.put(2, "two-" + k);
          Map<Integer, String> entries = new HashMap<>();
          entries.put(1, "one-" + k);
          entries.put(2, "two-" + k);
          maps.put(k, entries);
        }
        db(source).flush();
        // Rows in files and in the memtable at the sync point: overwrite the lower half again.
        for (int k = 0; k < KEYS / 2; k++) {
          source.setCurrentKey(k);
          value.update(k + 1000L);
          values.put(k, k + 1000L);
        }

        RunnableFuture<SnapshotResult<KeyedStateHandle>> future = canonicalSavepoint(source);
        assertFalse(future.isDone(), "the rows must be written in the asynchronous phase");

        ValueState<Long> late = TestBackends.voidState(source, LATE);
        for (int k = 0; k < KEYS; k++) {
          source.setCurrentKey(k);
          value.update(-1L);
          list.add(-1L);
          map.put(1, "after");
          map.remove(2);
          map.put(3, "after");
          late.update(-1L);
        }
        for (int k = KEYS; k < KEYS + 20; k++) {
          source.setCurrentKey(k);
          value.update(-1L);
        }
        source.setCurrentKey(7);
        value.clear();
        list.clear();
        db(source).flush();
        db(source).compactAll();

        future.run();
        savepoint = future.get().getJobManagerOwnedSnapshot();
      } finally {
        source.dispose();
      }
    }
    try (MockEnvironment env = env()) {
      AbstractKeyedStateBackend<Integer> restored =
          create(env, target, Collections.singletonList(savepoint));
      try {
        ValueState<Long> value = TestBackends.voidState(restored, VALUE);
        ListState<Long> list = TestBackends.voidState(restored, LIST);
        MapState<Integer, String> map = TestBackends.voidState(restored, MAP);
        ValueState<Long> late = TestBackends.voidState(restored, LATE);
        for (int k = 0; k < KEYS + 20; k++) {
          restored.setCurrentKey(k);
          assertEquals(values.get(k), value.value(), "value of key " + k);
          List<Long> elements = new ArrayList<>();
          Iterable<Long> stored = list.get();
          if (stored != null) {
            stored.forEach(elements::add);
          }
          assertEquals(
              lists.getOrDefault(k, Collections.emptyList()), elements, "list of key " + k);
          Map<Integer, String> entries = new HashMap<>();
          for (Map.Entry<Integer, String> e : map.entries()) {
            entries.put(e.getKey(), e.getValue());
          }
          assertEquals(maps.getOrDefault(k, Collections.emptyMap()), entries, "map of key " + k);
          assertNull(late.value(), "a state written only after the sync point, key " + k);
        }
      } finally {
        restored.dispose();
      }
    }
  }

  /** What Flink's operator does for a canonical savepoint: the sync phase, then the future. */
  private static RunnableFuture<SnapshotResult<KeyedStateHandle>> canonicalSavepoint(
      AbstractKeyedStateBackend<Integer> backend) throws Exception {
    SavepointResources<Integer> resources = backend.savepoint();
    SnapshotStrategyRunner<KeyedStateHandle, ?> runner =
        new SnapshotStrategyRunner<>(
            "canonical savepoint",
            new SavepointSnapshotStrategy<>(resources.getSnapshotResources()),
            new CloseableRegistry(),
            resources.getPreferredSnapshotExecutionType());
    return runner.snapshot(
        1L,
        1L,
        new MemCheckpointStreamFactory(16 << 20),
        new CheckpointOptions(
            SavepointType.savepoint(SavepointFormatType.CANONICAL),
            CheckpointStorageLocationReference.getDefault()));
  }

  /** This line's Cobble backend, through the line-neutral factory. */
  private StateBackend cobble() throws Exception {
    Configuration config = new Configuration();
    config.setString("state.backend.type", CobbleStateBackendFactory.class.getName());
    config.setString("state.backend.cobble.localdir", dir.toString());
    return load(config);
  }

  private static StateBackend load(Configuration config) throws Exception {
    return StateBackendLoader.loadStateBackendFromConfig(
        config, CanonicalSavepointPointInTimeTest.class.getClassLoader(), null);
  }

  private static MockEnvironment env() {
    return new MockEnvironmentBuilder().setManagedMemorySize(64L << 20).build();
  }

  private static AbstractKeyedStateBackend<Integer> create(
      MockEnvironment env, StateBackend backend, Collection<KeyedStateHandle> restore)
      throws Exception {
    return (AbstractKeyedStateBackend<Integer>)
        backend.createKeyedStateBackend(
            new KeyedStateBackendParametersImpl<>(
                env,
                new JobID(),
                "savepoint_op",
                IntSerializer.INSTANCE,
                KEY_GROUPS,
                new KeyGroupRange(0, KEY_GROUPS - 1),
                env.getTaskKvStateRegistry(),
                TtlTimeProvider.DEFAULT,
                new UnregisteredMetricsGroup(),
                (name, value) -> {},
                restore,
                new CloseableRegistry(),
                1.0));
  }

  private static Db db(AbstractKeyedStateBackend<?> backend) throws Exception {
    // Every line's CobbleKeyedStateBackend holds the shared core in this field.
    Field core = backend.getClass().getDeclaredField("core");
    core.setAccessible(true);
    return ((CobbleKeyedStateCore<?>) core.get(backend)).db();
  }
}
