package io.cobble.flink.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Db;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bytes a warmed keyed state allocates per operation on the synchronous path, with {@code Long}
 * keys and values as the flink-benchmarks state shapes use them. The result objects the API must
 * return (the boxed value, the list) are counted; the budget each test names leaves room for them
 * and for nothing per operation in the key encoding or the engine call. Each shape is measured once
 * with its rows in table files (read through the block cache) and once in the memtable.
 *
 * <p>One source for every Flink line that builds the backend on {@code MockEnvironment}: each line
 * module adds this directory to its test sources and subclasses it with its own backend.
 */
public abstract class StateAllocationContract {
  private static final int KEYS = 2_000;
  private static final int USER_KEYS = 4;

  @TempDir Path dir;

  private MockEnvironment env;
  private AbstractKeyedStateBackend<Long> backend;
  private final Long[] keys = new Long[KEYS];
  private final Long[] userKeys = new Long[USER_KEYS];

  @BeforeEach
  void open() throws Exception {
    env = new MockEnvironmentBuilder().setManagedMemorySize(64L << 20).build();
    Configuration c = new Configuration();
    c.setString("state.backend.cobble.localdir", dir.toString());
    backend =
        backend(c)
            .createKeyedStateBackend(
                new KeyedStateBackendParametersImpl<>(
                    env,
                    new JobID(),
                    "alloc_op",
                    LongSerializer.INSTANCE,
                    2,
                    new KeyGroupRange(0, 1),
                    env.getTaskKvStateRegistry(),
                    TtlTimeProvider.DEFAULT,
                    new UnregisteredMetricsGroup(),
                    (name, value) -> {},
                    Collections.emptyList(),
                    new CloseableRegistry(),
                    1.0));
    for (int i = 0; i < KEYS; i++) {
      keys[i] = (long) i;
    }
    for (int i = 0; i < USER_KEYS; i++) {
      userKeys[i] = (long) i;
    }
  }

  @AfterEach
  void close() throws Exception {
    backend.dispose();
    env.close();
  }

  /** The line's Cobble state backend configured with {@code config}. */
  protected abstract AbstractStateBackend backend(Configuration config);

  @Test
  void valueGetAllocatesOnlyTheValueItReturns() throws Exception {
    ValueState<Long> state = value();
    for (Long k : keys) {
      backend.setCurrentKey(k);
      state.update(k * 7);
    }
    Op get =
        k -> {
          backend.setCurrentKey(k);
          assertEquals(k * 7, (long) state.value());
        };
    // The boxed Long (16 bytes): its 8 serialized bytes are deserialized where they are stored
    // (copying them out cost 24 more; the older path also copied the row key per call and got the
    // value wrapped in a row array: 104 bytes).
    assertBudget("valueGet (memtable)", get, 24);
    db().flush();
    assertBudget("valueGet (table)", get, 24);
  }

  @Test
  void mapGetAndContainsArePointReadsThatAllocateOnlyTheValue() throws Exception {
    MapState<Long, Long> state = map();
    for (Long k : keys) {
      backend.setCurrentKey(k);
      for (Long uk : userKeys) {
        state.put(uk, k + uk);
      }
    }
    Op get =
        k -> {
          backend.setCurrentKey(k);
          Long uk = userKeys[(int) (k % USER_KEYS)];
          assertEquals(k + uk, (long) state.get(uk));
          assertTrue(state.contains(uk));
        };
    // Two reads: the boxed value (16 bytes) for get, nothing for contains; both read the stored
    // bytes in place (copying them out cost 2 x 32 more; the older path, with a row key copy and a
    // row array per read, took 214 bytes).
    assertBudget("mapGet+mapContains (memtable)", get, 24);
    db().flush();
    assertBudget("mapGet+mapContains (table)", get, 24);
  }

  /**
   * Iterating a map of 10 entries: each row is decoded from the engine's buffers as its chunk is
   * read, so an entry allocates the entry, its key and its value (boxed here) and no copy of the
   * row; the rest is per iterator (the scan's cursor and keys), whose chunk buffers the state hands
   * from one exhausted iterator to the next.
   */
  @Test
  void mapIterationAllocatesTheEntriesAndAFewBuffersPerIterator() throws Exception {
    MapState<Long, Long> state = map();
    for (Long k : keys) {
      backend.setCurrentKey(k);
      for (long uk = 0; uk < 10; uk++) {
        state.put(uk, k * 1_000 + uk);
      }
    }
    Op iterate =
        k -> {
          backend.setCurrentKey(k);
          long sum = 0;
          for (Map.Entry<Long, Long> e : state.entries()) {
            sum += e.getKey() + e.getValue();
          }
          assertEquals(10 * k * 1_000 + 2 * 45, sum);
        };
    // 10 entries of 24 bytes and their boxed values of 16 (the keys are cached Longs), then the
    // iterator's and the scan's own objects: 1,079 bytes with the rows in the memtable, 919 in a
    // table. Chunk buffers of each iterator's own took 1,463 and 1,303; copying each row out (key
    // and value into a row and an array, and before that out of the memtable's arena) 2,239 and
    // about 2,300.
    assertBudget("mapIterator (10 entries, memtable)", iterate, 1_200);
    db().flush();
    assertBudget("mapIterator (10 entries, table)", iterate, 1_200);
  }

  @Test
  void listGetAllocatesTheListAndItsElementsOnly() throws Exception {
    ListState<Long> state = list();
    for (Long k : keys) {
      backend.setCurrentKey(k);
      state.add(k);
    }
    Op get =
        k -> {
          backend.setCurrentKey(k);
          for (Long e : state.get()) {
            assertEquals(k, e);
          }
        };
    // An ArrayList of one slot (48 bytes), the boxed element and the stored list bytes; the old
    // path (default-sized list, row key copy, row array) took 222 bytes.
    assertBudget("listGet (memtable)", get, 144);
    db().flush();
    assertBudget("listGet (table)", get, 144);
  }

  /**
   * {@code addAll} of the benchmark's batch of 100 {@code Long}s: the list operand (100 times a
   * length byte and 8 bytes) is built in reused buffers and handed to the engine in a reused array,
   * so what is allocated is the memtable's copy of it and nothing of the size of the operand
   * besides. Measured with each key's list in a table file, so no memtable fold rewrites a longer
   * list.
   */
  @Test
  void listAddAllAllocatesOnlyTheMemtableCopyOfTheBatch() throws Exception {
    ListState<Long> state = list();
    List<Long> batch = new ArrayList<>();
    for (long i = 0; i < 100; i++) {
      batch.add(i * 1_000_003L);
    }
    Op addAll =
        k -> {
          backend.setCurrentKey(k);
          state.addAll(batch);
        };
    // The operand is 900 bytes and the memtable keeps it with its key and a small header; the old
    // path also allocated a copy of the operand per call (about 1,800 bytes in all).
    assertBudget("listAddAll (100 elements)", addAll, 1_300, () -> db().flush());
    backend.setCurrentKey(keys[7]);
    List<Long> stored = new ArrayList<>();
    state.get().forEach(stored::add);
    assertEquals(4 * 100, stored.size(), "every round appended the whole batch");
    assertEquals(batch, stored.subList(300, 400));
  }

  /**
   * {@code putAll} of the benchmark's 10 entries: keys and values are encoded into reused buffers
   * and written as one engine call, so it allocates no more than the same entries put one by one
   * (the memtable's copy of the rows), plus the map's entry iterator.
   */
  @Test
  void mapPutAllAllocatesNoMoreThanSinglePuts() throws Exception {
    MapState<Long, Long> state = map();
    Map<Long, Long> batch = new HashMap<>();
    Map<Long, Long> older = new HashMap<>();
    for (long i = 0; i < 10; i++) {
      batch.put(i, i * 31);
      older.put(i, i * 31 + 1);
    }
    Op puts =
        k -> {
          backend.setCurrentKey(k);
          for (Map.Entry<Long, Long> e : older.entrySet()) {
            state.put(e.getKey(), e.getValue());
          }
        };
    long single = measure(puts, () -> db().flush());
    Op putAll =
        k -> {
          backend.setCurrentKey(k);
          state.putAll(batch);
        };
    assertBudget("mapPutAll (10 entries)", putAll, single + 48, () -> db().flush());
    backend.setCurrentKey(keys[11]);
    for (long i = 0; i < 10; i++) {
      assertEquals(i * 31, (long) state.get(i));
    }
  }

  private ValueState<Long> value() throws Exception {
    return backend.getPartitionedState(
        VoidNamespace.INSTANCE,
        VoidNamespaceSerializer.INSTANCE,
        new ValueStateDescriptor<>("value", Long.class));
  }

  private MapState<Long, Long> map() throws Exception {
    return backend.getPartitionedState(
        VoidNamespace.INSTANCE,
        VoidNamespaceSerializer.INSTANCE,
        new MapStateDescriptor<>("map", Long.class, Long.class));
  }

  private ListState<Long> list() throws Exception {
    return backend.getPartitionedState(
        VoidNamespace.INSTANCE,
        VoidNamespaceSerializer.INSTANCE,
        new ListStateDescriptor<>("list", Long.class));
  }

  /**
   * Runs {@code op} over every key three times (class loading, lazy buffers, compilation), then
   * once more counting this thread's allocations, and fails when the bytes per operation exceed
   * {@code budget}.
   */
  private void assertBudget(String shape, Op op, long budget) throws Exception {
    assertBudget(shape, op, budget, () -> {});
  }

  /** As above, running {@code beforeMeasuring} between the warm-up rounds and the counted one. */
  private void assertBudget(String shape, Op op, long budget, Step beforeMeasuring)
      throws Exception {
    long perOp = measure(op, beforeMeasuring);
    System.out.println(shape + ": " + perOp + " B/op");
    assertTrue(
        perOp <= budget,
        shape + " allocated " + perOp + " bytes per operation, more than its budget of " + budget);
  }

  /** Bytes per operation of {@code op} over every key, after three warm-up rounds. */
  private long measure(Op op, Step beforeMeasuring) throws Exception {
    for (int round = 0; round < 3; round++) {
      for (Long k : keys) {
        op.run(k);
      }
    }
    beforeMeasuring.run();
    long probe = -allocated() + allocated();
    long before = allocated();
    for (Long k : keys) {
      op.run(k);
    }
    return (allocated() - before - probe) / KEYS;
  }

  private static long allocated() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
        .getThreadAllocatedBytes(Thread.currentThread().getId());
  }

  private Db db() throws Exception {
    // Every line's CobbleKeyedStateBackend holds the shared core in this field.
    Field core = backend.getClass().getDeclaredField("core");
    core.setAccessible(true);
    return ((CobbleKeyedStateCore<?>) core.get(backend)).db();
  }

  private interface Op {
    void run(Long key) throws Exception;
  }

  private interface Step {
    void run() throws Exception;
  }
}
