package io.cobble.flink.table.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.flink.table.CobbleSourceOptions;
import io.cobble.flink.table.ScanMode;
import io.cobble.flink.table.TableStorage;
import io.cobble.testing.table.TestSinkTable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.utils.JoinedRowData;
import org.apache.flink.table.functions.AsyncLookupFunction;
import org.apache.flink.table.functions.LookupFunction;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Lookups against a model of the table: random upserts and deletes over several commits (some
 * compacted, some left in level 0), then every projection shape a planner can push (the key fields
 * plus any subset of the value columns, in any order, joined in either key order) probed with
 * stored, deleted and never-written keys, by the sync and the async function. Each answer must be
 * exactly the model's row (every produced field, nulls included) or empty, and the async rows must
 * equal the sync rows. Probes come both as the planner's {@code GenericRowData} key rows and as
 * other row types, so the key fields taken from the probe and the key fields decoded from the
 * stored key are both checked. The seed is printed; {@code -Dlookup.model.seed=N} replays a run.
 */
class LookupModelTest {

  private static final RowType ROW =
      RowType.of(
          new LogicalType[] {
            new VarCharType(false, VarCharType.MAX_LENGTH),
            new BigIntType(false),
            new VarCharType(VarCharType.MAX_LENGTH),
            new IntType(),
            new DoubleType()
          },
          new String[] {"region", "id", "name", "score", "amount"});
  private static final String[] REGIONS = {"eu", "us", "ap-southeast"};
  private static final int IDS = 300;

  @TempDir Path dir;

  @Test
  void lookupsReturnTheModelsRowsForEveryProjectionSyncAndAsync() throws Exception {
    long seed = Long.getLong("lookup.model.seed", System.nanoTime());
    System.out.println(
        "LookupModelTest seed " + seed + " (replay: -Dlookup.model.seed=" + seed + ")");
    Random random = new Random(seed);
    Map<List<Object>, Object[]> model = writeTable(random);

    int[] valueFields = {2, 3, 4};
    for (int round = 0; round < 8; round++) {
      List<Integer> produced = new ArrayList<>(List.of(0, 1));
      for (int field : valueFields) {
        if (random.nextBoolean()) {
          produced.add(field);
        }
      }
      Collections.shuffle(produced, random);
      boolean idFirst = random.nextBoolean();
      String shape = "seed " + seed + ", produced fields " + produced + ", id first " + idFirst;
      checkProjection(random, model, produced, idFirst, shape);
    }
  }

  private void checkProjection(
      Random random,
      Map<List<Object>, Object[]> model,
      List<Integer> produced,
      boolean idFirst,
      String shape)
      throws Exception {
    int[][] projection = new int[produced.size()][];
    for (int j = 0; j < projection.length; j++) {
      projection[j] = new int[] {produced.get(j)};
    }
    int regionAt = produced.indexOf(0);
    int idAt = produced.indexOf(1);
    int[] joinColumns = idFirst ? new int[] {idAt, regionAt} : new int[] {regionAt, idAt};
    LookupFunction sync = (LookupFunction) function(false, 0, projection, joinColumns);
    AsyncLookupFunction async = (AsyncLookupFunction) function(true, 0, projection, joinColumns);
    LookupFunction cached = (LookupFunction) function(false, 1 << 20, projection, joinColumns);
    try {
      List<RowData> probes = new ArrayList<>();
      List<Object[]> expected = new ArrayList<>();
      for (int i = 0; i < 400; i++) {
        String region = REGIONS[random.nextInt(REGIONS.length)];
        // Ids beyond IDS were never written: misses inside and outside the written range.
        long id = random.nextInt(IDS + 50);
        Object[] keyValues =
            idFirst
                ? new Object[] {id, StringData.fromString(region)}
                : new Object[] {StringData.fromString(region), id};
        // Every third probe is not a GenericRowData, as a planner's key row might be.
        probes.add(
            i % 3 == 0
                ? new JoinedRowData(
                    GenericRowData.of(keyValues[0]), GenericRowData.of(keyValues[1]))
                : GenericRowData.of(keyValues));
        expected.add(model.get(List.of(region, id)));
      }
      List<CompletableFuture<Collection<RowData>>> pending = new ArrayList<>();
      for (RowData probe : probes) {
        pending.add(async.asyncLookup(probe));
      }
      for (int i = 0; i < probes.size(); i++) {
        String where = shape + ", probe " + i + " " + probes.get(i);
        Collection<RowData> syncRows = sync.lookup(probes.get(i));
        Collection<RowData> asyncRows = pending.get(i).get(60, TimeUnit.SECONDS);
        Object[] row = expected.get(i);
        if (row == null) {
          assertTrue(syncRows.isEmpty(), "sync miss, " + where);
          assertTrue(asyncRows.isEmpty(), "async miss, " + where);
          continue;
        }
        assertEquals(1, syncRows.size(), "sync hit, " + where);
        assertEquals(1, asyncRows.size(), "async hit, " + where);
        RowData got = syncRows.iterator().next();
        assertRow(row, produced, got, "sync, " + where);
        assertRow(row, produced, asyncRows.iterator().next(), "async, " + where);
        assertEquals(got, asyncRows.iterator().next(), "async and sync rows, " + where);
      }
      // The row cache's answers: kept on first read, repeated from the cache afterwards.
      for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < probes.size(); i++) {
          String where = shape + ", row cache pass " + pass + ", probe " + i + " " + probes.get(i);
          Collection<RowData> rows = cached.lookup(probes.get(i));
          Object[] row = expected.get(i);
          assertEquals(row == null ? 0 : 1, rows.size(), where);
          if (row != null) {
            assertRow(row, produced, rows.iterator().next(), where);
          }
        }
      }
    } finally {
      cached.close();
      async.close();
      sync.close();
    }
  }

  private static void assertRow(Object[] expected, List<Integer> produced, RowData got, String at) {
    assertEquals(produced.size(), got.getArity(), at);
    for (int j = 0; j < produced.size(); j++) {
      int field = produced.get(j);
      RowData.FieldGetter getter = RowData.createFieldGetter(ROW.getTypeAt(field), j);
      assertEquals(
          expected[field],
          getter.getFieldOrNull(got),
          "field " + ROW.getFieldNames().get(field) + ", " + at);
    }
  }

  /**
   * Random upserts and deletes over four commits, the first two compacted, the rest in level 0 and
   * memtable flushes; returns the rows the last commit holds, by (region, id).
   */
  private Map<List<Object>, Object[]> writeTable(Random random) throws Exception {
    Map<List<Object>, Object[]> model = new HashMap<>();
    try (TestSinkTable table =
        new TestSinkTable(
            dir.resolve("table"), dir.resolve("work"), ROW, List.of("id", "region"), 8, 2, 0)) {
      for (int commit = 0; commit < 4; commit++) {
        for (int i = 0; i < 400; i++) {
          String region = REGIONS[random.nextInt(REGIONS.length)];
          long id = random.nextInt(IDS);
          List<Object> key = List.of(region, id);
          if (random.nextInt(6) == 0) {
            table.delete(StringData.fromString(region), id, null, null, null);
            model.remove(key);
            continue;
          }
          Object[] row = {
            StringData.fromString(region),
            id,
            random.nextInt(5) == 0
                ? null
                : StringData.fromString("n" + commit + "-" + "x".repeat(random.nextInt(90))),
            random.nextInt(5) == 0 ? null : random.nextInt(),
            random.nextInt(5) == 0 ? null : random.nextDouble() * 1e6
          };
          table.upsert(row);
          model.put(key, row);
        }
        if (commit < 2) {
          table.compactAll();
        }
        table.commit();
      }
    }
    return model;
  }

  /** The lookup function a planner gets for {@code projection} joined on {@code columns}. */
  private Object function(boolean async, long rowCache, int[][] projection, int... columns)
      throws Exception {
    SourceSettings settings =
        new SourceSettings(
            TableStorage.fromTableOptions(dir.resolve("table").toUri(), Map.of()),
            SourceSettings.LATEST,
            ScanMode.BATCH,
            600_000,
            1 << 20,
            rowCache,
            CobbleSourceOptions.SCAN_SNAPSHOT_LEASE_MS.defaultValue());
    CobbleDynamicTableSource source =
        CobbleDynamicTableSource.sinkTable(
            settings, ROW, new int[] {1, 0}, 8, null, new LookupSettings(async, 3));
    source.applyProjection(projection, null);
    return PlannerLookup.open(source, columns);
  }
}
