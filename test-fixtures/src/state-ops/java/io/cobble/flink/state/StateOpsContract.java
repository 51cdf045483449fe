package io.cobble.flink.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Db;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Operational behaviour of the keyed backend on a mock task: the managed memory it reserves from
 * the slot (and gives back on dispose and on a failed restore), its engine gauges, and Flink state
 * TTL applied by Cobble compaction (expired rows physically gone, live ones kept, nothing dropped
 * when the TTL config turns compaction cleanup off).
 *
 * <p>One source for every Flink line that builds the backend on {@code MockEnvironment}: each line
 * module adds this directory to its test sources and subclasses it with its own backend.
 */
public abstract class StateOpsContract {
  private static final long SLOT = 64L << 20;
  private static final int KEY_GROUPS = 16;
  private static final int KEYS = 100;

  @TempDir Path dir;

  @Test
  void reservesTheManagedShareWhileOpenAndReleasesItOnDispose() throws Exception {
    try (MockEnvironment env = env()) {
      Gauges gauges = new Gauges();
      AbstractKeyedStateBackend<Integer> backend =
          create(env, TtlTimeProvider.DEFAULT, gauges, 0.5, Collections.emptyList());
      assertEquals(SLOT / 2, env.getMemoryManager().availableMemory(), "half the slot reserved");
      assertEquals(SLOT / 2, gauges.value("memoryBudgetBytes"));
      Db db = db(backend);
      assertEquals(SLOT / 8, db.config().memtableCapacity(), "budget x 0.5 / 2 buffers");
      assertEquals(SLOT / 4, db.config().blockCacheSize(), "the rest of the budget");
      assertEquals(SLOT / 4, gauges.value("blockCacheCapacityBytes"));

      ValueState<String> state =
          backend.getPartitionedState(
              VoidNamespace.INSTANCE,
              VoidNamespaceSerializer.INSTANCE,
              new ValueStateDescriptor<>("v", String.class));
      for (int k = 0; k < KEYS; k++) {
        backend.setCurrentKey(k);
        state.update("value-" + k);
      }
      assertTrue(gauges.value("memtableBytes") > 0, "the memtable holds the writes");
      db.flush();
      assertTrue(gauges.value("liveFiles") >= 1);
      assertEquals(gauges.value("liveFiles"), gauges.value("l0Files"));
      long lookups = gauges.value("blockCacheHits") + gauges.value("blockCacheMisses");
      for (int k = 0; k < KEYS; k++) {
        backend.setCurrentKey(k);
        assertEquals("value-" + k, state.value());
      }
      assertTrue(
          gauges.value("blockCacheHits") + gauges.value("blockCacheMisses") >= lookups + KEYS,
          "each read of a flushed value looks its block up in the cache");
      assertTrue(gauges.value("blockCacheHits") > 0, "the table's blocks are read again");
      assertEquals(0, gauges.value("writeStalls"));
      assertTrue(gauges.value("pendingCompactionBytes") >= 0);

      backend.dispose();
      backend.dispose();
      assertEquals(SLOT, env.getMemoryManager().availableMemory(), "released on dispose");
      assertEquals(0, gauges.value("memtableBytes"), "gauges of a disposed backend read 0");
    }
  }

  @Test
  void aFailedRestoreReleasesTheReservedMemory() throws Exception {
    try (MockEnvironment env = env()) {
      KeyedStateHandle garbage =
          new IncrementalRemoteKeyedStateHandle(
              java.util.UUID.randomUUID(),
              new KeyGroupRange(0, KEY_GROUPS - 1),
              1,
              Collections.emptyList(),
              Collections.emptyList(),
              new ByteStreamStateHandle("meta", new byte[] {1, 2, 3, 4, 5, 6, 7, 8}),
              8);
      assertThrows(
          Exception.class,
          () ->
              create(
                  env,
                  TtlTimeProvider.DEFAULT,
                  new Gauges(),
                  0.5,
                  Collections.singletonList(garbage)));
      assertEquals(SLOT, env.getMemoryManager().availableMemory(), "nothing stays reserved");
    }
  }

  @Test
  void compactionDropsExpiredValueAndMapEntriesAndKeepsLiveOnes() throws Exception {
    StateTtlConfig ttl = StateTtlConfig.newBuilder(Duration.ofMillis(100)).build();
    assertEquals(2 * KEYS, ttlRowsAfterCompaction(ttl), "only the live half remains");
  }

  @Test
  void nothingIsDroppedWhenTheTtlConfigTurnsBackgroundCleanupOff() throws Exception {
    StateTtlConfig ttl =
        StateTtlConfig.newBuilder(Duration.ofMillis(100)).disableCleanupInBackground().build();
    assertEquals(4 * KEYS, ttlRowsAfterCompaction(ttl), "expired rows stay until read");
  }

  /**
   * Appends an element to the lists of keys 0..199 at time 0 and a second one to keys 100..199 at
   * time 1000 (a TTL of 100 ms expires the first), each round flushed into its own file: after
   * compaction the lists of keys 0..99 are gone and those of 100..199 hold only their live element,
   * in the stored rows and not only as Flink's TTL decorator reads them.
   */
  @Test
  void compactionDropsExpiredListElementsAndListsWithNoLiveOne() throws Exception {
    ManualTime time = new ManualTime();
    try (MockEnvironment env = env()) {
      AbstractKeyedStateBackend<Integer> backend =
          create(env, time, new Gauges(), 1.0, Collections.emptyList());
      try {
        ListStateDescriptor<String> desc = new ListStateDescriptor<>("ttl-l", String.class);
        desc.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofMillis(100)).build());
        ListState<String> list =
            backend.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, desc);
        Db db = db(backend);
        for (int k = 0; k < 2 * KEYS; k++) {
          backend.setCurrentKey(k);
          list.add("old" + k);
        }
        db.flush();
        time.now = 1000;
        for (int k = KEYS; k < 2 * KEYS; k++) {
          backend.setCurrentKey(k);
          list.add("new" + k);
        }
        db.flush();
        db.compactAll();
        db.waitForCompactions();

        List<Integer> elementsPerRow = storedListElements(db, "ttl-l");
        assertEquals(KEYS, elementsPerRow.size(), "the lists with no live element are gone");
        for (int n : elementsPerRow) {
          assertEquals(1, n, "each remaining list holds only its live element");
        }
        for (int k = KEYS; k < 2 * KEYS; k++) {
          backend.setCurrentKey(k);
          assertEquals(Collections.singletonList("new" + k), toList(list.get()));
        }
        backend.setCurrentKey(0);
        assertEquals(Collections.emptyList(), toList(list.get()), "expired for Flink either way");
      } finally {
        backend.dispose();
      }
    }
  }

  /**
   * Random {@code add}, {@code addAll} and {@code update} calls with batches of up to 1,200
   * elements (operands from a few bytes to past 64 KB, the largest reused buffer) on 30 keys, with
   * flushes and full compactions at random points: every list reads exactly as a plain Java list
   * that applied the same calls. A batch holding a null fails like Flink's backends, before
   * anything of it is written. Seed printed; replay with {@code -Dcobble.test.seed}.
   */
  @Test
  void listBatchesMatchAModelThroughFlushesAndCompactions() throws Exception {
    seeded(
        "listBatchesMatchAModelThroughFlushesAndCompactions",
        (backend, rnd, seed) -> {
          ListState<String> list =
              backend.getPartitionedState(
                  VoidNamespace.INSTANCE,
                  VoidNamespaceSerializer.INSTANCE,
                  new ListStateDescriptor<>("batch-l", String.class));
          Db db = db(backend);
          Map<Integer, List<String>> model = new HashMap<>();
          for (int step = 0; step < 400; step++) {
            int k = rnd.nextInt(30);
            backend.setCurrentKey(k);
            List<String> batch = new ArrayList<>();
            int size = rnd.nextInt(10) == 0 ? 600 + rnd.nextInt(600) : rnd.nextInt(120);
            for (int i = 0; i < size; i++) {
              batch.add(
                  rnd.nextInt(8) == 0 ? "" : "e" + step + "." + i + "x".repeat(rnd.nextInt(90)));
            }
            switch (rnd.nextInt(6)) {
              case 0:
                if (!batch.isEmpty()) {
                  batch.set(rnd.nextInt(batch.size()), null);
                  List<String> withNull = batch;
                  assertThrows(NullPointerException.class, () -> list.addAll(withNull));
                  assertThrows(NullPointerException.class, () -> list.update(withNull));
                }
                break;
              case 1:
                list.update(batch);
                model.put(k, batch.isEmpty() ? null : new ArrayList<>(batch));
                break;
              case 2:
                String one = "one" + step;
                list.add(one);
                model.computeIfAbsent(k, x -> new ArrayList<>()).add(one);
                break;
              default:
                list.addAll(batch);
                if (!batch.isEmpty()) {
                  model.computeIfAbsent(k, x -> new ArrayList<>()).addAll(batch);
                }
            }
            int r = rnd.nextInt(40);
            if (r == 0) {
              db.flush();
            } else if (r == 1) {
              db.flush();
              db.compactAll();
              db.waitForCompactions();
            }
          }
          for (int round = 0; round < 2; round++) {
            for (int k = 0; k < 30; k++) {
              backend.setCurrentKey(k);
              List<String> expected = model.get(k);
              Iterable<String> got = list.get();
              if (expected == null) {
                assertTrue(
                    got == null || !got.iterator().hasNext(), "key " + k + " (seed " + seed + ")");
              } else {
                assertEquals(expected, toList(got), "key " + k + " (seed " + seed + ")");
              }
            }
            db.flush();
            db.compactAll();
            db.waitForCompactions();
          }
          assertThrows(NullPointerException.class, () -> list.addAll(null));
          assertThrows(NullPointerException.class, () -> list.update(null));
        });
  }

  /**
   * Random {@code putAll} maps of up to 700 entries (more than one engine batch), null values
   * included, mixed with single puts and removes over 20 keys and 1,000 user keys, with flushes and
   * full compactions at random points: every entry reads, by {@code get} and by iteration, exactly
   * as a plain Java map that applied the same calls. Seed printed; replay with {@code
   * -Dcobble.test.seed}.
   */
  @Test
  void mapPutAllMatchesAModelThroughFlushesAndCompactions() throws Exception {
    seeded(
        "mapPutAllMatchesAModelThroughFlushesAndCompactions",
        (backend, rnd, seed) -> {
          MapState<Integer, String> map =
              backend.getPartitionedState(
                  VoidNamespace.INSTANCE,
                  VoidNamespaceSerializer.INSTANCE,
                  new MapStateDescriptor<>("batch-m", Integer.class, String.class));
          Db db = db(backend);
          Map<Integer, Map<Integer, String>> model = new HashMap<>();
          for (int step = 0; step < 300; step++) {
            int k = rnd.nextInt(20);
            backend.setCurrentKey(k);
            Map<Integer, String> entries = model.computeIfAbsent(k, x -> new HashMap<>());
            int r = rnd.nextInt(5);
            if (r == 0) {
              int uk = rnd.nextInt(1000);
              map.remove(uk);
              entries.remove(uk);
            } else if (r == 1) {
              int uk = rnd.nextInt(1000);
              map.put(uk, "p" + step);
              entries.put(uk, "p" + step);
            } else {
              int size = rnd.nextInt(8) == 0 ? 300 + rnd.nextInt(400) : rnd.nextInt(40);
              Map<Integer, String> batch = new HashMap<>();
              for (int i = 0; i < size; i++) {
                batch.put(rnd.nextInt(1000), rnd.nextInt(6) == 0 ? null : "v" + step + "." + i);
              }
              map.putAll(batch);
              entries.putAll(batch);
            }
            int f = rnd.nextInt(30);
            if (f == 0) {
              db.flush();
            } else if (f == 1) {
              db.flush();
              db.compactAll();
              db.waitForCompactions();
            }
          }
          map.putAll(null);
          for (int round = 0; round < 2; round++) {
            for (int k = 0; k < 20; k++) {
              backend.setCurrentKey(k);
              Map<Integer, String> expected = model.getOrDefault(k, Collections.emptyMap());
              for (int uk = 0; uk < 1000; uk++) {
                assertEquals(
                    expected.containsKey(uk),
                    map.contains(uk),
                    k + "/" + uk + " (seed " + seed + ")");
                assertEquals(expected.get(uk), map.get(uk), k + "/" + uk + " (seed " + seed + ")");
              }
              Map<Integer, String> iterated = new HashMap<>();
              for (Map.Entry<Integer, String> e : map.entries()) {
                iterated.put(e.getKey(), e.getValue());
              }
              assertEquals(expected, iterated, "entries of " + k + " (seed " + seed + ")");
            }
            db.flush();
            db.compactAll();
            db.waitForCompactions();
          }
        });
  }

  /**
   * Flink TTL over the batch writes: at time 0 keys 0..199 get a 150-element {@code addAll} and a
   * 50-entry {@code putAll}, at time 1000 keys 100..199 get a second batch of each (a TTL of 100 ms
   * expires the first): read through Flink's TTL decorators, and after compaction in the stored
   * rows, only the second batches remain.
   */
  @Test
  void ttlExpiresWholeBatchesOfAddAllAndPutAll() throws Exception {
    ManualTime time = new ManualTime();
    try (MockEnvironment env = env()) {
      AbstractKeyedStateBackend<Integer> backend =
          create(env, time, new Gauges(), 1.0, Collections.emptyList());
      try {
        StateTtlConfig ttl = StateTtlConfig.newBuilder(Duration.ofMillis(100)).build();
        ListStateDescriptor<String> listDesc = new ListStateDescriptor<>("ttl-bl", String.class);
        listDesc.enableTimeToLive(ttl);
        MapStateDescriptor<Integer, String> mapDesc =
            new MapStateDescriptor<>("ttl-bm", Integer.class, String.class);
        mapDesc.enableTimeToLive(ttl);
        ListState<String> list =
            backend.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, listDesc);
        MapState<Integer, String> map =
            backend.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, mapDesc);
        Db db = db(backend);
        for (int round = 0; round < 2; round++) {
          time.now = round * 1000L;
          for (int k = round * KEYS; k < 2 * KEYS; k++) {
            backend.setCurrentKey(k);
            list.addAll(listBatch(round, k));
            map.putAll(mapBatch(round, k));
          }
          db.flush();
        }
        db.compactAll();
        db.waitForCompactions();
        List<Integer> elementsPerRow = storedListElements(db, "ttl-bl");
        assertEquals(KEYS, elementsPerRow.size(), "the lists with no live element are gone");
        for (int n : elementsPerRow) {
          assertEquals(150, n, "each remaining list holds only its live batch");
        }
        for (int k = 0; k < 2 * KEYS; k++) {
          backend.setCurrentKey(k);
          List<String> expectedList = k < KEYS ? Collections.emptyList() : listBatch(1, k);
          assertEquals(expectedList, toList(list.get()), "list of " + k);
          Map<Integer, String> expectedMap = k < KEYS ? Collections.emptyMap() : mapBatch(1, k);
          for (int uk = 0; uk < 100; uk++) {
            assertEquals(expectedMap.get(uk), map.get(uk), "map of " + k + " at " + uk);
          }
        }
      } finally {
        backend.dispose();
      }
    }
  }

  private static List<String> listBatch(int round, int key) {
    List<String> batch = new ArrayList<>();
    for (int i = 0; i < 150; i++) {
      batch.add("r" + round + "k" + key + "e" + i);
    }
    return batch;
  }

  /** Round 0 fills user keys 0..49, round 1 user keys 50..99. */
  private static Map<Integer, String> mapBatch(int round, int key) {
    Map<Integer, String> batch = new HashMap<>();
    for (int i = 0; i < 50; i++) {
      batch.put(round * 50 + i, "r" + round + "k" + key + "u" + i);
    }
    return batch;
  }

  /** The number of elements of each stored row of list state {@code name}, read raw. */
  private static List<Integer> storedListElements(Db db, String name) {
    List<Integer> counts = new ArrayList<>();
    for (int kg = 0; kg < KEY_GROUPS; kg++) {
      try (ScanCursor c =
          db.scan(kg, CobbleKeyedStateCore.stateFamily(name), null, null, ScanOptions.defaults())) {
        while (c.hasNext()) {
          Row row = c.next();
          byte[] list = row.column(0);
          int elements = 0;
          for (int pos = 0; pos < list.length; elements++) {
            int length = 0;
            for (int shift = 0; ; shift += 7) {
              int b = list[pos++] & 0xFF;
              length |= (b & 0x7F) << shift;
              if ((b & 0x80) == 0) {
                break;
              }
            }
            pos += length;
          }
          counts.add(elements);
        }
      }
    }
    return counts;
  }

  private static List<String> toList(Iterable<String> elements) {
    List<String> out = new ArrayList<>();
    if (elements != null) {
      elements.forEach(out::add);
    }
    return out;
  }

  /**
   * {@code MapState.isEmpty} answers from the newest data: entries compacted into a level, then
   * removed (or joined by a new entry) in the memtable and again after that memtable is flushed,
   * read per key against a model and against the map's own iteration.
   */
  @Test
  void mapIsEmptySeesNewerRemovesAndPutsOverCompactedEntries() throws Exception {
    try (MockEnvironment env = env()) {
      AbstractKeyedStateBackend<Integer> backend =
          create(env, new ManualTime(), new Gauges(), 1.0, Collections.emptyList());
      try {
        MapState<Integer, String> map =
            backend.getPartitionedState(
                VoidNamespace.INSTANCE,
                VoidNamespaceSerializer.INSTANCE,
                new MapStateDescriptor<>("probe-m", Integer.class, String.class));
        Db db = db(backend);
        for (int k = 0; k < KEYS; k++) {
          backend.setCurrentKey(k);
          for (int u = 0; u < 3; u++) {
            map.put(u, k % 5 == 0 ? null : "m" + u);
          }
        }
        db.flush();
        db.compactAll();
        db.waitForCompactions();
        for (int k = 0; k < KEYS; k++) {
          backend.setCurrentKey(k);
          if (k % 2 == 0) {
            for (int u = 0; u < 3; u++) {
              map.remove(u);
            }
          }
          if (k % 6 == 0) {
            map.put(7, "new");
          }
        }
        for (int round = 0; round < 2; round++) {
          for (int k = 0; k < KEYS; k++) {
            backend.setCurrentKey(k);
            boolean empty = k % 2 == 0 && k % 6 != 0;
            assertEquals(empty, map.isEmpty(), "key " + k + ", round " + round);
            assertEquals(empty, !map.keys().iterator().hasNext(), "key " + k + ", round " + round);
          }
          db.flush();
        }
      } finally {
        backend.dispose();
      }
    }
  }

  /**
   * {@code getKeys} yields each key with state once, read in place: a map's several rows per key
   * collapse to one key, a list read from compacted tables and from memtable merges counts once,
   * and keys whose rows were all removed after compaction are not yielded.
   */
  @Test
  void getKeysYieldsEachLiveKeyOnceOverTablesAndMemtables() throws Exception {
    seeded(
        "getKeysYieldsEachLiveKeyOnceOverTablesAndMemtables",
        (backend, rnd, seed) -> {
          MapState<Integer, String> map =
              TestBackends.voidState(
                  backend, new MapStateDescriptor<>("keys-m", Integer.class, String.class));
          ListState<Integer> list =
              TestBackends.voidState(backend, new ListStateDescriptor<>("keys-l", Integer.class));
          Db db = db(backend);
          for (int k = 0; k < KEYS; k++) {
            backend.setCurrentKey(k);
            for (int u = 0; u < 4; u++) {
              map.put(u, "m" + u);
            }
            list.add(k);
          }
          db.flush();
          db.compactAll();
          db.waitForCompactions();
          List<Integer> mapKeys = new ArrayList<>();
          List<Integer> listKeys = new ArrayList<>();
          for (int k = 0; k < KEYS; k++) {
            backend.setCurrentKey(k);
            if (rnd.nextInt(3) == 0) {
              for (int u = 0; u < 4; u++) {
                map.remove(u);
              }
            } else {
              mapKeys.add(k);
            }
            if (rnd.nextInt(4) == 0) {
              list.clear();
            } else {
              list.add(-k);
              listKeys.add(k);
            }
          }
          assertEquals(mapKeys, sortedKeys(backend, "keys-m"), "seed " + seed);
          assertEquals(listKeys, sortedKeys(backend, "keys-l"), "seed " + seed);
        });
  }

  private static List<Integer> sortedKeys(
      AbstractKeyedStateBackend<Integer> backend, String state) {
    List<Integer> keys = new ArrayList<>();
    try (java.util.stream.Stream<Integer> s = backend.getKeys(state, VoidNamespace.INSTANCE)) {
      s.forEach(keys::add);
    }
    Collections.sort(keys);
    return keys;
  }

  /**
   * A map state with fixed-length key and namespace serializers writes tables with a prefix filter
   * over (key group, key, namespace): 2 + 1 + 4 + 1 + 0 bytes for {@code Integer} keys and {@code
   * VoidNamespace}; a value state's tables carry none. Per-key iteration reads every entry back.
   */
  @Test
  void mapStateTablesCarryAPrefixFilterOverKeyAndNamespace() throws Exception {
    try (MockEnvironment env = env()) {
      AbstractKeyedStateBackend<Integer> backend =
          create(env, new ManualTime(), new Gauges(), 1.0, Collections.emptyList());
      try {
        MapState<Integer, String> map =
            backend.getPartitionedState(
                VoidNamespace.INSTANCE,
                VoidNamespaceSerializer.INSTANCE,
                new MapStateDescriptor<>("prefix-m", Integer.class, String.class));
        ValueState<String> value =
            backend.getPartitionedState(
                VoidNamespace.INSTANCE,
                VoidNamespaceSerializer.INSTANCE,
                new ValueStateDescriptor<>("prefix-v", String.class));
        for (int k = 0; k < KEYS; k++) {
          backend.setCurrentKey(k);
          value.update("v" + k);
          for (int u = 0; u < 3; u++) {
            map.put(u, k + "/" + u);
          }
        }
        Db db = db(backend);
        db.flush();
        java.util.Set<Integer> lengths = new java.util.TreeSet<>();
        io.cobble.version.Version v = db.versionSet().acquire();
        try {
          for (io.cobble.version.Tree t : v.trees()) {
            for (io.cobble.version.FileMeta f : t.allFiles()) {
              lengths.add(f.table().prefixFilterLength());
            }
          }
        } finally {
          v.unref();
        }
        assertEquals(new java.util.TreeSet<>(java.util.Arrays.asList(0, 8)), lengths);
        for (int k = 0; k < KEYS; k++) {
          backend.setCurrentKey(k);
          Map<Integer, String> read = new HashMap<>();
          for (Map.Entry<Integer, String> e : map.entries()) {
            read.put(e.getKey(), e.getValue());
          }
          assertEquals(3, read.size(), "key " + k);
          assertEquals(k + "/2", read.get(2), "key " + k);
        }
      } finally {
        backend.dispose();
      }
    }
  }

  /**
   * Writes a value and a map entry for keys 0..99 at time 0 and for keys 100..199 at time 1000 (a
   * TTL of 100 ms expires the first half), flushing each half into its own file, compacts the shard
   * and returns the rows it still holds; the live half must read back either way.
   */
  private int ttlRowsAfterCompaction(StateTtlConfig ttl) throws Exception {
    ManualTime time = new ManualTime();
    try (MockEnvironment env = env()) {
      AbstractKeyedStateBackend<Integer> backend =
          create(env, time, new Gauges(), 1.0, Collections.emptyList());
      try {
        ValueStateDescriptor<String> valueDesc = new ValueStateDescriptor<>("ttl-v", String.class);
        valueDesc.enableTimeToLive(ttl);
        MapStateDescriptor<Integer, String> mapDesc =
            new MapStateDescriptor<>("ttl-m", Integer.class, String.class);
        mapDesc.enableTimeToLive(ttl);
        ValueState<String> value =
            backend.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, valueDesc);
        MapState<Integer, String> map =
            backend.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, mapDesc);
        Db db = db(backend);
        for (int half = 0; half < 2; half++) {
          time.now = half * 1000L;
          for (int k = half * KEYS; k < (half + 1) * KEYS; k++) {
            backend.setCurrentKey(k);
            value.update("v" + k);
            map.put(k, "m" + k);
          }
          db.flush();
        }
        // Two flushed files may already start a background compaction that drops the expired
        // half, so only the live half is certain here; the count after compactAll is the check.
        assertTrue(
            backend.numKeyValueStateEntries() >= 2 * KEYS, "the live half before compaction");
        db.compactAll();
        db.waitForCompactions();
        int rows = backend.numKeyValueStateEntries();
        for (int k = KEYS; k < 2 * KEYS; k++) {
          backend.setCurrentKey(k);
          assertEquals("v" + k, value.value());
          assertEquals("m" + k, map.get(k));
        }
        backend.setCurrentKey(0);
        assertNull(value.value(), "expired for Flink either way");
        return rows;
      } finally {
        backend.dispose();
      }
    }
  }

  /**
   * Map iteration against a model (seed: {@code -Dcobble.test.seed}): entries, keys and values of
   * maps up to three chunks long, over puts, removes and null values spread across the memtable,
   * level 0 and compacted levels; removes through each kind of iterator (gone from the state and
   * the model, a second remove or one before {@code next} rejected) and {@code setValue} through an
   * entry.
   */
  @Test
  void mapIterationMatchesAModelThroughFlushesCompactionsAndIteratorRemoves() throws Exception {
    seeded(
        "mapIterationMatchesAModelThroughFlushesCompactionsAndIteratorRemoves",
        (backend, rnd, seed) -> {
          MapState<Integer, String> map =
              backend.getPartitionedState(
                  VoidNamespace.INSTANCE,
                  VoidNamespaceSerializer.INSTANCE,
                  new MapStateDescriptor<>("iter-m", Integer.class, String.class));
          Db db = db(backend);
          Map<Integer, Map<Integer, String>> model = new HashMap<>();
          for (int step = 0; step < 3000; step++) {
            int k = rnd.nextInt(12);
            backend.setCurrentKey(k);
            Map<Integer, String> entries = model.computeIfAbsent(k, x -> new HashMap<>());
            int uk = rnd.nextInt(k < 4 ? 400 : 30);
            if (rnd.nextInt(4) == 0) {
              map.remove(uk);
              entries.remove(uk);
            } else {
              String v = rnd.nextInt(8) == 0 ? null : "v" + step;
              map.put(uk, v);
              entries.put(uk, v);
            }
            int f = rnd.nextInt(400);
            if (f == 0) {
              db.flush();
            } else if (f == 1) {
              db.flush();
              db.compactAll();
              db.waitForCompactions();
            } else if (f < 40 && step % 50 == 0) {
              checkIteration(map, backend, model, k, rnd, seed);
            }
          }
          for (int round = 0; round < 2; round++) {
            for (int k = 0; k < 13; k++) {
              checkIteration(map, backend, model, k, rnd, seed);
            }
            db.flush();
            db.compactAll();
            db.waitForCompactions();
          }
        });
  }

  /**
   * Map iterators decode each chunk of rows from the engine's buffers, so nothing of one iterator
   * may leak into another or outlive its step: iterators of the same and of another state nested
   * inside one and interleaved with it, point reads between its steps, entries held past later
   * {@code next} calls and chunk reads (their keys, values and {@code setValue}), the current key
   * changed while an iterator is held, and {@code remove} after a {@code hasNext} that read the
   * next chunk.
   */
  @Test
  void mapIteratorsNestInterleaveAndKeepTheirEntries() throws Exception {
    seeded(
        "mapIteratorsNestInterleaveAndKeepTheirEntries",
        (backend, rnd, seed) -> {
          MapState<Integer, String> a =
              backend.getPartitionedState(
                  VoidNamespace.INSTANCE,
                  VoidNamespaceSerializer.INSTANCE,
                  new MapStateDescriptor<>("nest-a", Integer.class, String.class));
          MapState<Integer, String> b =
              backend.getPartitionedState(
                  VoidNamespace.INSTANCE,
                  VoidNamespaceSerializer.INSTANCE,
                  new MapStateDescriptor<>("nest-b", Integer.class, String.class));
          // More than two chunks of the iterator's 128 rows, half in a table, some overwritten in
          // the memtable.
          int n = 300;
          Map<Integer, String> ea = new java.util.TreeMap<>();
          Map<Integer, String> eb = new java.util.TreeMap<>();
          backend.setCurrentKey(1);
          for (int i = 0; i < n; i++) {
            a.put(i, "a" + i);
            ea.put(i, "a" + i);
            b.put(2 * i, "b" + i);
            eb.put(2 * i, "b" + i);
          }
          db(backend).flush();
          for (int i = 0; i < n; i += 3) {
            a.put(i, "A" + i);
            ea.put(i, "A" + i);
          }

          java.util.Iterator<Map.Entry<Integer, String>> outer = a.iterator();
          List<Map.Entry<Integer, String>> held = new ArrayList<>();
          while (outer.hasNext()) {
            Map.Entry<Integer, String> e = outer.next();
            held.add(e);
            if (held.size() % 50 == 1) {
              assertEquals(eb, entriesOf(b), "another state's iteration nested");
              assertEquals(ea, entriesOf(a), "the same state's iteration nested");
              assertEquals(ea.get(e.getKey()), a.get(e.getKey()));
              assertTrue(!a.isEmpty() && b.contains(0));
            }
          }
          assertEquals(n, held.size());
          for (int i = 0; i < n; i++) {
            assertEquals(i, held.get(i).getKey(), "a held entry's key");
            assertEquals(ea.get(i), held.get(i).getValue(), "a held entry's value");
          }
          held.get(3).setValue("set3");
          ea.put(3, "set3");
          assertEquals("set3", a.get(3), "setValue through an entry of a chunk read long ago");

          java.util.Iterator<Integer> keys = a.keys().iterator();
          java.util.Iterator<String> values = a.values().iterator();
          for (int i = 0; i < n; i++) {
            assertEquals(i, keys.next(), "interleaved keys()");
            assertEquals(ea.get(i), values.next(), "interleaved values()");
          }

          // The current key changes while an iterator of key 1 is held: it goes on reading key 1,
          // and its entries write key 1's rows.
          java.util.Iterator<Map.Entry<Integer, String>> ofKey1 = a.iterator();
          Map.Entry<Integer, String> first = ofKey1.next();
          backend.setCurrentKey(2);
          a.put(0, "key2");
          first.setValue("again0");
          for (int i = 1; i < 200; i++) {
            assertEquals(
                ea.get(i), ofKey1.next().getValue(), "key 1's iterator after a key change");
          }
          assertEquals("key2", a.get(0), "setValue wrote key 1's row, not the current key's");
          backend.setCurrentKey(1);
          ea.put(0, "again0");
          assertEquals("again0", a.get(0));

          // remove() after a hasNext() that read the next chunk deletes the element handed out.
          java.util.Iterator<Map.Entry<Integer, String>> it = a.iterator();
          for (int i = 0; i < 128; i++) {
            it.next();
          }
          assertTrue(it.hasNext());
          it.remove();
          ea.remove(127);
          assertNull(a.get(127), "the last element of the first chunk is removed");
          assertEquals(ea.get(128), a.get(128), "the first of the next chunk is not");
          assertEquals(128, it.next().getKey());
          java.util.Iterator<String> vit = a.values().iterator();
          for (int i = 0; i < 256; i++) {
            vit.next();
          }
          assertTrue(vit.hasNext());
          vit.remove();
          ea.remove(256);
          assertNull(a.get(256), "values(): the last element of the second chunk is removed");
          assertEquals(ea.get(257), a.get(257));
          assertEquals(ea, entriesOf(a));
        });
  }

  private static Map<Integer, String> entriesOf(MapState<Integer, String> map) throws Exception {
    Map<Integer, String> out = new java.util.TreeMap<>();
    for (Map.Entry<Integer, String> e : map.entries()) {
      out.put(e.getKey(), e.getValue());
    }
    return out;
  }

  private static void checkIteration(
      MapState<Integer, String> map,
      AbstractKeyedStateBackend<Integer> backend,
      Map<Integer, Map<Integer, String>> model,
      int k,
      java.util.Random rnd,
      long seed)
      throws Exception {
    backend.setCurrentKey(k);
    Map<Integer, String> expected = model.computeIfAbsent(k, x -> new HashMap<>());
    String at = "key " + k + " (seed " + seed + ")";
    List<Integer> keys = new ArrayList<>();
    for (Integer uk : map.keys()) {
      keys.add(uk);
    }
    List<Integer> sortedKeys = new ArrayList<>(expected.keySet());
    Collections.sort(sortedKeys);
    assertEquals(sortedKeys, keys, "keys() in key order, " + at);
    List<String> values = new ArrayList<>();
    for (String v : map.values()) {
      values.add(v);
    }
    List<String> expectedValues = new ArrayList<>();
    for (Integer uk : sortedKeys) {
      expectedValues.add(expected.get(uk));
    }
    assertEquals(expectedValues, values, "values() in key order, " + at);
    Map<Integer, String> iterated = new HashMap<>();
    for (Map.Entry<Integer, String> e : map.entries()) {
      iterated.put(e.getKey(), e.getValue());
    }
    assertEquals(expected, iterated, "entries(), " + at);
    assertEquals(expected.isEmpty(), map.isEmpty(), "isEmpty(), " + at);

    // Removes and updates through the three kinds of iterator.
    int kind = rnd.nextInt(3);
    java.util.Iterator<?> it =
        kind == 0 ? map.keys().iterator() : kind == 1 ? map.values().iterator() : map.iterator();
    assertThrows(IllegalStateException.class, it::remove, "remove before next, " + at);
    boolean lastRemoved = false;
    for (Integer uk : sortedKeys) {
      Object element = it.next();
      int choice = rnd.nextInt(4);
      lastRemoved = choice == 0;
      if (choice == 0) {
        it.remove();
        assertThrows(IllegalStateException.class, it::remove, "second remove, " + at);
        expected.remove(uk);
        if (kind == 2) {
          @SuppressWarnings("unchecked")
          Map.Entry<Integer, String> e = (Map.Entry<Integer, String>) element;
          assertEquals(uk, e.getKey(), at);
          assertNull(e.getValue(), "a removed entry's value, " + at);
        }
      } else if (choice == 1 && kind == 2) {
        @SuppressWarnings("unchecked")
        Map.Entry<Integer, String> e = (Map.Entry<Integer, String>) element;
        assertEquals(expected.get(uk), e.setValue("set" + uk), at);
        assertEquals("set" + uk, e.getValue(), at);
        expected.put(uk, "set" + uk);
      }
    }
    assertTrue(!it.hasNext(), "iterator exhausted, " + at);
    // The exhausted iterator left its buffers to the state's next iterator, which fills them with
    // another key's map: a remove() now still deletes this iterator's last element.
    int other = (k + 1) % 12;
    backend.setCurrentKey(other);
    int otherSize = 0;
    for (Map.Entry<Integer, String> e : map.entries()) {
      otherSize++;
    }
    assertEquals(model.getOrDefault(other, new HashMap<>()).size(), otherSize, at);
    backend.setCurrentKey(k);
    if (sortedKeys.isEmpty() || lastRemoved) {
      assertThrows(IllegalStateException.class, it::remove, "remove after exhaustion, " + at);
    } else {
      it.remove();
      expected.remove(sortedKeys.get(sortedKeys.size() - 1));
    }
    Map<Integer, String> after = new HashMap<>();
    for (Map.Entry<Integer, String> e : map.entries()) {
      after.put(e.getKey(), e.getValue());
    }
    assertEquals(expected, after, "entries after removes through the iterator, " + at);
  }

  /**
   * The frame of a randomized model test: a seed (printed with {@code test}'s name; replay with
   * {@code -Dcobble.test.seed}), a fresh backend, disposed afterwards.
   */
  private void seeded(String test, SeededBody body) throws Exception {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    System.out.println(test + " seed " + seed);
    try (MockEnvironment env = env()) {
      AbstractKeyedStateBackend<Integer> backend =
          create(env, new ManualTime(), new Gauges(), 1.0, Collections.emptyList());
      try {
        body.run(backend, new java.util.Random(seed), seed);
      } finally {
        backend.dispose();
      }
    }
  }

  /** The body of a {@link #seeded} test. */
  private interface SeededBody {
    void run(AbstractKeyedStateBackend<Integer> backend, java.util.Random rnd, long seed)
        throws Exception;
  }

  private MockEnvironment env() {
    return new MockEnvironmentBuilder().setManagedMemorySize(SLOT).build();
  }

  private AbstractKeyedStateBackend<Integer> create(
      MockEnvironment env,
      TtlTimeProvider time,
      MetricGroup metrics,
      double fraction,
      Collection<KeyedStateHandle> restore)
      throws Exception {
    Configuration c = new Configuration();
    c.setString("state.backend.cobble.localdir", dir.toString());
    return backend(c)
        .createKeyedStateBackend(
            new KeyedStateBackendParametersImpl<>(
                env,
                new JobID(),
                "ops_op",
                IntSerializer.INSTANCE,
                KEY_GROUPS,
                new KeyGroupRange(0, KEY_GROUPS - 1),
                env.getTaskKvStateRegistry(),
                time,
                metrics,
                (name, value) -> {},
                restore,
                new CloseableRegistry(),
                fraction));
  }

  /** The line's Cobble state backend configured with {@code config}. */
  protected abstract AbstractStateBackend backend(Configuration config);

  private static Db db(AbstractKeyedStateBackend<?> backend) throws Exception {
    // Every line's CobbleKeyedStateBackend holds the shared core in this field.
    Field core = backend.getClass().getDeclaredField("core");
    core.setAccessible(true);
    return ((CobbleKeyedStateCore<?>) core.get(backend)).db();
  }

  private static final class ManualTime implements TtlTimeProvider {
    volatile long now;

    @Override
    public long currentTimestamp() {
      return now;
    }
  }

  /** A metric group that keeps the gauges registered under {@code cobble}. */
  private static final class Gauges extends UnregisteredMetricsGroup {
    private final Map<String, Metric> metrics = new HashMap<>();

    @Override
    public MetricGroup addGroup(String name) {
      return "cobble".equals(name) ? this : super.addGroup(name);
    }

    @Override
    public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
      metrics.put(name, gauge);
      return gauge;
    }

    long value(String name) {
      Metric m = metrics.get(name);
      assertTrue(m instanceof Gauge, "gauge " + name + " registered: " + metrics.keySet());
      return ((Number) ((Gauge<?>) m).getValue()).longValue();
    }
  }
}
