package io.cobble.flink.table.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.flink.table.CobbleSourceOptions;
import io.cobble.flink.table.ScanMode;
import io.cobble.flink.table.TableStorage;
import io.cobble.testing.table.TestSinkTable;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a lookup allocates, on a real table shaped like the SQL benchmark's (a BIGINT key, an
 * 80-character string, an INT and a DOUBLE), measured with the JVM's per-thread allocation counter
 * over many lookups after the same loop ran once (class loading, lazy buffers and compilation
 * allocate once). A miss, which the bloom filters answer, allocates nothing: a single stray object
 * per lookup would be at least 16 bytes per lookup. A hit allocates the row it returns (the row,
 * its boxed values, the string over a copy of the stored bytes, the list around it), and nothing
 * per lookup for the key, the projection, the engine's values or intermediate rows.
 */
class LookupAllocationTest {

  private static final RowType ROW =
      RowType.of(
          new LogicalType[] {
            new BigIntType(false),
            new VarCharType(VarCharType.MAX_LENGTH),
            new IntType(),
            new DoubleType()
          },
          new String[] {"id", "name", "score", "amount"});
  private static final int KEYS = 20_000;
  private static final int LOOKUPS = 20_000;
  private static final String PADDING = "-".repeat(72);

  @TempDir Path dir;

  /** With a row cache, the measured (second) run of each shape is answered from the cache. */
  @ParameterizedTest(name = "row cache {0} bytes")
  @ValueSource(longs = {0, 8 << 20})
  void missesAllocateNothingAndHitsOnlyTheirRow(long rowCache) throws Exception {
    try (TestSinkTable table =
        new TestSinkTable(dir.resolve("table"), dir.resolve("work"), ROW, List.of("id"), 4, 2, 0)) {
      for (long id = 0; id < KEYS; id++) {
        table.upsert(2 * id, StringData.fromString(name(2 * id)), (int) id, id / 4.0);
      }
      table.compactAll();
      table.commit();
    }
    RowData[] hits = new RowData[LOOKUPS];
    RowData[] misses = new RowData[LOOKUPS];
    Random random = new Random(11);
    for (int i = 0; i < LOOKUPS; i++) {
      long id = random.nextInt(KEYS);
      hits[i] = GenericRowData.of(2 * id);
      misses[i] = GenericRowData.of(2 * id + 1);
    }
    LookupFunction lookup = function(rowCache);
    try {
      for (int i = 0; i < 100; i++) {
        Collection<RowData> rows = lookup.lookup(hits[i]);
        assertEquals(1, rows.size());
        RowData row = rows.iterator().next();
        long id = hits[i].getLong(0);
        assertEquals(id, row.getLong(0));
        assertEquals(name(id), row.getString(1).toString());
        assertEquals(id / 2, row.getInt(2));
        assertEquals(id / 8.0, row.getDouble(3));
        assertTrue(lookup.lookup(misses[i]).isEmpty());
      }
      long missBytes =
          allocatedBy(
              () -> {
                for (RowData key : misses) {
                  if (!lookup.lookup(key).isEmpty()) {
                    throw new AssertionError("a miss found a row");
                  }
                }
              });
      long hitBytes =
          allocatedBy(
              () -> {
                for (RowData key : hits) {
                  if (lookup.lookup(key).size() != 1) {
                    throw new AssertionError("a hit found no row");
                  }
                }
              });
      System.out.printf(
          "lookup allocations: %.1f B per miss, %.1f B per hit%n",
          (double) missBytes / LOOKUPS, (double) hitBytes / LOOKUPS);
      assertTrue(missBytes < LOOKUPS, "misses allocated " + missBytes + " B in all");
      assertTrue(
          hitBytes / LOOKUPS <= HIT_BYTES,
          "a hit allocated " + (double) hitBytes / LOOKUPS + " B, more than " + HIT_BYTES);
    } finally {
      lookup.close();
    }
  }

  /**
   * A hit measured about 360 bytes: the row with its boxed values (~100 B; the key field is the
   * probe's own Long), the binary string over a copy of the stored name bytes (~110 B), the list
   * around the row, and nothing from the engine: the values are decoded into the row where they are
   * stored. Handing the row over as an array of copied values first cost ~456 B per hit (the column
   * array and one array per column), and the path before that ~1,280 B per hit and ~450 B per miss
   * (the key's buffer and copy, the engine's projection and shard lookup, a Java string decoded
   * from the name and intermediate key values).
   */
  private static final long HIT_BYTES = 400;

  private static String name(long id) {
    return String.format("%08d", id) + PADDING;
  }

  private LookupFunction function(long rowCache) throws Exception {
    SourceSettings settings =
        new SourceSettings(
            TableStorage.fromTableOptions(dir.resolve("table").toUri(), Map.of()),
            SourceSettings.LATEST,
            ScanMode.BATCH,
            3_600_000,
            1 << 20,
            rowCache,
            CobbleSourceOptions.SCAN_SNAPSHOT_LEASE_MS.defaultValue());
    int[][] keys = {{0}};
    LookupTableSource.LookupContext context =
        (LookupTableSource.LookupContext)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {LookupTableSource.LookupContext.class},
                (proxy, method, args) -> keys);
    LookupTableSource source =
        CobbleDynamicTableSource.sinkTable(
            settings, ROW, new int[] {0}, 4, null, new LookupSettings(false, 1));
    LookupFunction function =
        ((LookupFunctionProvider) source.getLookupRuntimeProvider(context)).createLookupFunction();
    function.open(new FunctionContext(null));
    return function;
  }

  /**
   * Bytes this thread allocated in the second of two runs of {@code work}, less the probe's own.
   */
  private static long allocatedBy(Lookups work) throws Exception {
    work.run();
    long probe = -allocated() + allocated();
    long before = allocated();
    work.run();
    return allocated() - before - probe;
  }

  private interface Lookups {
    void run() throws Exception;
  }

  private static long allocated() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
        .getThreadAllocatedBytes(Thread.currentThread().getId());
  }
}
