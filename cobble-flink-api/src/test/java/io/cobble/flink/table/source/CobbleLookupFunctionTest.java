package io.cobble.flink.table.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CorruptionException;
import io.cobble.flink.table.CobbleSourceOptions;
import io.cobble.flink.table.ScanMode;
import io.cobble.flink.table.TableStorage;
import io.cobble.snapshot.GlobalPin;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.table.TestSinkTable;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.OperatorMetricGroup;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.functions.AsyncLookupFunction;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Lookups on a real table: hits, misses, a composite key in any join order, new snapshots. */
class CobbleLookupFunctionTest {

  private static final RowType ROW =
      RowType.of(
          new LogicalType[] {
            new VarCharType(false, VarCharType.MAX_LENGTH),
            new VarCharType(VarCharType.MAX_LENGTH),
            new BigIntType(false)
          },
          new String[] {"region", "name", "id"});

  @TempDir Path dir;

  private SourceSettings settings(long pollMs) {
    return settings(pollMs, 0);
  }

  private SourceSettings settings(long pollMs, long rowCache) {
    return new SourceSettings(
        TableStorage.fromTableOptions(dir.resolve("table").toUri(), Map.of()),
        SourceSettings.LATEST,
        ScanMode.BATCH,
        pollMs,
        1 << 20,
        rowCache,
        CobbleSourceOptions.SCAN_SNAPSHOT_LEASE_MS.defaultValue());
  }

  /** The lookup function the planner gets for a join on the given physical columns. */
  private LookupFunction function(SourceSettings settings, int... columns) throws Exception {
    return (LookupFunction)
        PlannerLookup.open(
            CobbleDynamicTableSource.sinkTable(
                settings, ROW, new int[] {2, 0}, 8, null, new LookupSettings(false, 1)),
            columns);
  }

  private static String name(Collection<RowData> rows) {
    assertTrue(rows.size() <= 1);
    return rows.isEmpty() ? null : rows.iterator().next().getString(1).toString();
  }

  /** With a row cache too: the key read before the new snapshot answers from the new one. */
  @ParameterizedTest(name = "row cache {0} bytes")
  @ValueSource(longs = {0, 1 << 20})
  void looksUpCompositeKeysInJoinOrderAndFollowsNewSnapshots(long rowCache) throws Exception {
    try (TestSinkTable table =
        new TestSinkTable(
            dir.resolve("table"), dir.resolve("work"), ROW, List.of("id", "region"), 8, 2, 0)) {
      for (long id = 0; id < 100; id++) {
        table.upsert(StringData.fromString("eu"), StringData.fromString("v1-" + id), id);
      }
      table.commit();
      // The join names region first, id second: the key row follows the join, not the table.
      LookupFunction lookup = function(settings(1, rowCache), 0, 2);
      try {
        assertEquals(
            "v1-7", name(lookup.lookup(GenericRowData.of(StringData.fromString("eu"), 7L))));
        assertEquals(
            "v1-7", name(lookup.lookup(GenericRowData.of(StringData.fromString("eu"), 7L))));
        assertEquals(null, name(lookup.lookup(GenericRowData.of(StringData.fromString("us"), 7L))));
        assertEquals(
            null, name(lookup.lookup(GenericRowData.of(StringData.fromString("eu"), 1000L))));

        table.upsert(StringData.fromString("eu"), StringData.fromString("v2-7"), 7L);
        table.commit();
        long deadline = System.nanoTime() + 30_000_000_000L;
        String seen;
        do {
          seen = name(lookup.lookup(GenericRowData.of(StringData.fromString("eu"), 7L)));
        } while (!"v2-7".equals(seen) && System.nanoTime() < deadline);
        assertEquals("v2-7", seen, "the lookup moved to the new global snapshot");
      } finally {
        lookup.close();
      }
    }
  }

  @Test
  void rowCacheGaugesCountItsHitsMissesAndBytes() throws Exception {
    try (TestSinkTable table =
        new TestSinkTable(
            dir.resolve("table"), dir.resolve("work"), ROW, List.of("id", "region"), 8, 2, 0)) {
      for (long id = 0; id < 50; id++) {
        table.upsert(StringData.fromString("eu"), StringData.fromString("v-" + id), id);
      }
      table.commit();
    }
    Map<String, Gauge<?>> gauges = new HashMap<>();
    OperatorMetricGroup group = capturing(gauges);
    RuntimeContext runtime =
        (RuntimeContext)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {RuntimeContext.class},
                (p, method, args) -> {
                  if (method.getName().equals("getMetricGroup")) {
                    return group;
                  }
                  throw new UnsupportedOperationException(method.getName());
                });
    LookupFunction lookup =
        (LookupFunction)
            PlannerLookup.open(
                CobbleDynamicTableSource.sinkTable(
                    settings(600_000, 1 << 20),
                    ROW,
                    new int[] {2, 0},
                    8,
                    null,
                    new LookupSettings(false, 1)),
                new FunctionContext(runtime),
                0,
                2);
    try {
      for (int pass = 0; pass < 3; pass++) {
        for (long id = 0; id < 60; id++) {
          String found = name(lookup.lookup(GenericRowData.of(StringData.fromString("eu"), id)));
          assertEquals(id < 50 ? "v-" + id : null, found);
        }
      }
      assertEquals(120L, gauges.get("rowCacheHits").getValue(), "two passes from the cache");
      assertEquals(60L, gauges.get("rowCacheMisses").getValue(), "the first pass read the tables");
      assertTrue((Long) gauges.get("rowCacheUsageBytes").getValue() > 0);
    } finally {
      lookup.close();
    }
  }

  /** An operator metric group that keeps every gauge registered in it or its subgroups. */
  private static OperatorMetricGroup capturing(Map<String, Gauge<?>> gauges) {
    return (OperatorMetricGroup)
        Proxy.newProxyInstance(
            OperatorMetricGroup.class.getClassLoader(),
            new Class<?>[] {OperatorMetricGroup.class},
            (p, method, args) -> {
              switch (method.getName()) {
                case "addGroup":
                  return p;
                case "gauge":
                  gauges.put((String) args[0], (Gauge<?>) args[1]);
                  return args[1];
                case "counter":
                  return args.length > 1 ? args[1] : new SimpleCounter();
                default:
                  throw new UnsupportedOperationException(method.getName());
              }
            });
  }

  @Test
  void lookupsOfOneTableInAJvmShareOneReader() throws Exception {
    try (TestSinkTable table =
        new TestSinkTable(
            dir.resolve("table"), dir.resolve("work"), ROW, List.of("id", "region"), 8, 2, 0)) {
      table.upsert(StringData.fromString("eu"), StringData.fromString("x"), 1L);
      table.commit();
    }
    SharedReaders.Lease first = SharedReaders.acquire(settings(1000));
    SharedReaders.Lease second = SharedReaders.acquire(settings(1000));
    assertSame(first.reader(), second.reader());
    first.close();
    second.close();
    try (SharedReaders.Lease third = SharedReaders.acquire(settings(1000))) {
      assertNotSame(first.reader(), third.reader(), "the last user closed the shared reader");
    }
  }

  @Test
  void aSharedReaderKeepsItsSnapshotsFromTheWritersRetention() throws Exception {
    Path root = dir.resolve("table");
    try (TestSinkTable table =
            new TestSinkTable(root, dir.resolve("work"), ROW, List.of("id", "region"), 8, 2, 1);
        Storage storage = StorageProviders.open(root.toUri(), StorageOptions.empty())) {
      SnapshotStore store = new SnapshotStore(storage);
      for (long id = 0; id < 50; id++) {
        table.upsert(StringData.fromString("eu"), StringData.fromString("v1-" + id), id);
      }
      long first = table.commit();
      SharedReaders.Lease lease = SharedReaders.acquire(settings(1));
      try {
        assertEquals(Set.of(first), pinned(store));
        for (long id = 0; id < 50; id++) {
          table.upsert(StringData.fromString("eu"), StringData.fromString("v2-" + id), id);
        }
        table.compactAll();
        long second = table.commit();
        table.commit();
        assertTrue(store.readGlobal(first).isPresent(), "retention 1 kept the pinned snapshot");
        Thread.sleep(5);
        lease.refreshIfDue();
        long third = lease.reader().snapshot().id();
        assertTrue(third > second, "the reader followed CURRENT");
        assertEquals(Set.of(first, third), pinned(store), "the previous snapshot stays pinned");
        table.commit();
        Thread.sleep(5);
        lease.refreshIfDue();
        table.commit();
        assertFalse(store.readGlobal(first).isPresent(), "released snapshots expire");
      } finally {
        lease.close();
      }
      assertTrue(pinned(store).isEmpty(), "closing the last user removes the pin");
    }
  }

  private static Set<Long> pinned(SnapshotStore store) {
    Set<Long> ids = new TreeSet<>();
    for (GlobalPin pin : store.globalPins()) {
      ids.addAll(pin.globalIds());
    }
    return ids;
  }

  /** The lookup function of a source with {@code projection} pushed into it. */
  private Object projectedFunction(
      SourceSettings settings, boolean async, int[][] projection, int... columns) throws Exception {
    CobbleDynamicTableSource source =
        CobbleDynamicTableSource.sinkTable(
            settings, ROW, new int[] {2, 0}, 8, null, new LookupSettings(async, 3));
    source.applyProjection(projection, null);
    return PlannerLookup.open(source, columns);
  }

  private static int asyncThreads() {
    int n = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("cobble-async-lookup-") && t.isAlive()) {
        n++;
      }
    }
    return n;
  }

  @Test
  void asyncLookupsReturnTheProjectedValuesWithBoundedReadsInFlight() throws Exception {
    writeEuTable();
    // The query reads name, id, region (in that order); the join names id, then region.
    int[][] projection = {{1}, {2}, {0}};
    int before = asyncThreads();
    AsyncLookupFunction async =
        (AsyncLookupFunction) projectedFunction(settings(60_000), true, projection, 1, 2);
    LookupFunction sync =
        (LookupFunction) projectedFunction(settings(60_000), false, projection, 1, 2);
    try {
      List<CompletableFuture<Collection<RowData>>> pending = new ArrayList<>();
      for (long id = 0; id < 300; id++) {
        pending.add(async.asyncLookup(GenericRowData.of(id, StringData.fromString("eu"))));
      }
      for (long id = 0; id < 300; id++) {
        Collection<RowData> rows = pending.get((int) id).get(60, TimeUnit.SECONDS);
        Collection<RowData> expected =
            sync.lookup(GenericRowData.of(id, StringData.fromString("eu")));
        assertEquals(id < 200 ? 1 : 0, rows.size(), "id " + id);
        assertEquals(expected.size(), rows.size());
        if (id < 200) {
          RowData row = rows.iterator().next();
          assertEquals(3, row.getArity());
          assertEquals("v-" + id, row.getString(0).toString());
          assertEquals(id, row.getLong(1));
          assertEquals("eu", row.getString(2).toString());
          assertEquals(expected.iterator().next(), row, "async and sync read the same row");
        }
      }
      int threads = asyncThreads() - before;
      assertTrue(
          threads >= 1 && threads <= 3,
          "lookup.async.max-in-flight = 3 bounds the reading threads, saw " + threads);
    } finally {
      async.close();
      sync.close();
    }
  }

  @Test
  void asyncLookupsAnswerProbesInMemoryOnTheCallingThreadWithTheSyncRows() throws Exception {
    writeEuTable();
    int[][] projection = {{1}, {2}, {0}};
    CobbleAsyncLookupFunction async =
        (CobbleAsyncLookupFunction) projectedFunction(settings(600_000), true, projection, 1, 2);
    LookupFunction sync =
        (LookupFunction) projectedFunction(settings(600_000), false, projection, 1, 2);
    try {
      // Cold: no shard is open and no block cached, so probes go to the pool.
      List<CompletableFuture<Collection<RowData>>> first = new ArrayList<>();
      for (long id = 0; id < 300; id++) {
        first.add(async.asyncLookup(GenericRowData.of(id, StringData.fromString("eu"))));
      }
      for (CompletableFuture<Collection<RowData>> f : first) {
        f.get(60, TimeUnit.SECONDS);
      }
      long handedOff = async.handedOff();
      assertTrue(handedOff >= 1, "cold probes need storage reads");
      assertEquals(300, handedOff + async.answeredInline());

      // Warm: every block these probes need is cached, so each is answered before asyncLookup
      // returns, on this thread, with the row the sync function reads.
      long inline = async.answeredInline();
      for (long id = 0; id < 300; id++) {
        CompletableFuture<Collection<RowData>> f =
            async.asyncLookup(GenericRowData.of(id, StringData.fromString("eu")));
        assertTrue(f.isDone(), "probe " + id + " answered inline");
        Collection<RowData> rows = f.get();
        Collection<RowData> expected =
            sync.lookup(GenericRowData.of(id, StringData.fromString("eu")));
        assertEquals(id < 200 ? 1 : 0, rows.size(), "id " + id);
        if (id < 200) {
          RowData row = rows.iterator().next();
          assertEquals("v-" + id, row.getString(0).toString());
          assertEquals(id, row.getLong(1));
          assertEquals("eu", row.getString(2).toString());
          assertEquals(expected.iterator().next(), row);
        } else {
          assertTrue(expected.isEmpty());
        }
      }
      assertEquals(handedOff, async.handedOff(), "no warm probe went to the pool");
      assertEquals(inline + 300, async.answeredInline());
    } finally {
      async.close();
      sync.close();
    }
  }

  @Test
  void asyncLookupErrorsFailTheirFuturesInlineAndOnThePool() throws Exception {
    Path root = writeEuTable();
    // A flipped byte near the start of every table file: inside its first data block.
    List<Path> tables;
    try (Stream<Path> files = Files.walk(root)) {
      tables = files.filter(f -> f.toString().endsWith(".sst")).collect(Collectors.toList());
    }
    assertFalse(tables.isEmpty());
    for (Path f : tables) {
      byte[] bytes = Files.readAllBytes(f);
      bytes[8] ^= 0x5a;
      Files.write(f, bytes);
    }
    AsyncLookupFunction async =
        (AsyncLookupFunction)
            projectedFunction(settings(600_000), true, new int[][] {{1}, {2}, {0}}, 1, 2);
    try {
      CompletableFuture<Collection<RowData>> nullKey =
          async.asyncLookup(GenericRowData.of(null, StringData.fromString("eu")));
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> nullKey.get(60, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof IllegalArgumentException, e.toString());

      int corrupt = 0;
      for (long id = 0; id < 200; id++) {
        try {
          Collection<RowData> rows =
              async
                  .asyncLookup(GenericRowData.of(id, StringData.fromString("eu")))
                  .get(60, TimeUnit.SECONDS);
          assertEquals(1, rows.size(), "id " + id);
          assertEquals("v-" + id, rows.iterator().next().getString(0).toString());
        } catch (ExecutionException failure) {
          assertTrue(failure.getCause() instanceof CorruptionException, failure.toString());
          corrupt++;
        }
      }
      assertTrue(corrupt > 0, "reads of the damaged blocks failed");
    } finally {
      async.close();
    }
  }

  /** Ids 0-199 in region "eu", named "v-" + id, committed; returns the table's root. */
  private Path writeEuTable() throws Exception {
    Path root = dir.resolve("table");
    try (TestSinkTable table =
        new TestSinkTable(root, dir.resolve("work"), ROW, List.of("id", "region"), 8, 2, 0)) {
      for (long id = 0; id < 200; id++) {
        table.upsert(StringData.fromString("eu"), StringData.fromString("v-" + id), id);
      }
      table.commit();
    }
    return root;
  }
}
