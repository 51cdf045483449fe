package io.cobble.it.minicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.testing.flink.LoopbackMiniCluster;
import io.cobble.testing.table.TestSinkTable;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Cobble SQL source on this line's MiniCluster with the line's dist jar: batch scans, a
 * streaming read following new global snapshots, and lookup joins. Tables are written through the
 * engine API exactly as the sink lays them out ({@link TestSinkTable}); the last test writes one
 * with the SQL sink itself.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CobbleSourceIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  @TempDir Path data;

  private static final RowType ROW =
      RowType.of(
          new LogicalType[] {
            new BigIntType(false),
            new VarCharType(VarCharType.MAX_LENGTH),
            new IntType(),
            new DecimalType(10, 2)
          },
          new String[] {"id", "name", "score", "price"});

  private static final String COLUMNS =
      "id BIGINT, name STRING, score INT, price DECIMAL(10, 2), PRIMARY KEY (id) NOT ENFORCED";

  private TestSinkTable fixture(String name) throws Exception {
    return new TestSinkTable(
        data.resolve(name), data.resolve(name + "-work"), ROW, List.of("id"), 8, 3, 0);
  }

  private static void upsert(TestSinkTable table, long id, String name) {
    boolean nulls = id % 4 == 0;
    table.upsert(
        id,
        StringData.fromString(name),
        nulls ? null : (int) id,
        nulls ? null : DecimalData.fromBigDecimal(BigDecimal.valueOf(id, 2), 10, 2));
  }

  private String ddl(String table, String name, String options) {
    return "CREATE TABLE "
        + table
        + " ("
        + COLUMNS
        + ") WITH ('connector' = 'cobble', 'path' = '"
        + data.resolve(name).toUri()
        + "'"
        + options
        + ")";
  }

  private static List<Row> collect(TableEnvironment env, String query) throws Exception {
    List<Row> rows = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql(query).collect()) {
      it.forEachRemaining(rows::add);
    }
    return rows;
  }

  /** The name column by id; every row must be an INSERT: the source emits no other kind. */
  private static TreeMap<Long, String> names(List<Row> rows) {
    TreeMap<Long, String> names = new TreeMap<>();
    for (Row row : rows) {
      assertEquals(RowKind.INSERT, row.getKind(), row.toString());
      assertEquals(null, names.put((Long) row.getField(0), (String) row.getField(1)), "twice");
    }
    return names;
  }

  private static TreeMap<Long, String> take(CloseableIterator<Row> rows, int count) {
    List<Row> taken = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      taken.add(rows.next());
    }
    return names(taken);
  }

  private static TreeMap<Long, String> expectedNames(long from, long to, String name) {
    TreeMap<Long, String> names = new TreeMap<>();
    for (long id = from; id <= to; id++) {
      names.put(id, name);
    }
    return names;
  }

  @Test
  void batchReadsEveryShardWithTypesAndNulls() throws Exception {
    try (TestSinkTable table = fixture("batch")) {
      for (long id = 1; id <= 300; id++) {
        upsert(table, id, "b" + id);
      }
      table.commit();
    }
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.getConfig().getConfiguration().setString("parallelism.default", "2");
    env.executeSql(ddl("t", "batch", ", 'source.kind' = 'sink', 'scan.mode' = 'batch'"));
    List<Row> rows = collect(env, "SELECT * FROM t");
    assertEquals(300, rows.size());
    for (Row row : rows) {
      long id = (Long) row.getField(0);
      assertEquals("b" + id, row.getField(1));
      assertEquals(id % 4 == 0 ? null : (int) id, row.getField(2));
      assertEquals(id % 4 == 0 ? null : BigDecimal.valueOf(id, 2), row.getField(3));
    }
    assertEquals(300, names(rows).size());
  }

  @Test
  void streamingFollowsNewGlobalSnapshots() throws Exception {
    try (TestSinkTable table = fixture("streaming")) {
      for (long id = 1; id <= 20; id++) {
        upsert(table, id, "s1");
      }
      table.commit();
      TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
      env.getConfig().getConfiguration().setString("parallelism.default", "1");
      env.executeSql(
          ddl("t", "streaming", ", 'scan.mode' = 'streaming', 'scan.poll-interval-ms' = '100'"));
      TableResult follow = env.executeSql("SELECT id, name FROM t");
      try (CloseableIterator<Row> rows = follow.collect()) {
        assertEquals(expectedNames(1, 20, "s1"), take(rows, 20));
        upsert(table, 2, "s2");
        upsert(table, 3, "s1"); // the same value again: not a change
        table.delete(4L, null, null, null);
        upsert(table, 21, "s2");
        table.commit();
        TreeMap<Long, String> changed = new TreeMap<>();
        changed.put(2L, "s2");
        changed.put(21L, "s2");
        assertEquals(changed, take(rows, 2));
        upsert(table, 22, "s3");
        table.commit();
        assertEquals(expectedNames(22, 22, "s3"), take(rows, 1));
      }
      // Closing the rows cancels the job, whose reader renews its pin in the table directory
      // until it stops: wait, so the temporary directory is not removed while it writes there.
      JobEnd.await(follow);
    }
  }

  @Test
  void lookupJoinsFindHitsAndMissesOnTheFullPrimaryKeyOnly() throws Exception {
    try (TestSinkTable table = fixture("lookup")) {
      for (long id = 1; id <= 100; id++) {
        upsert(table, id, "d" + id);
      }
      table.commit();
    }
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    env.getConfig().getConfiguration().setString("parallelism.default", "2");
    env.executeSql(ddl("dim", "lookup", ", 'source.block-cache-memory' = '4mb'"));
    env.executeSql(
        "CREATE TEMPORARY VIEW probes AS SELECT id, name, PROCTIME() AS pt FROM (VALUES"
            + " (CAST(1 AS BIGINT), 'd1'), (CAST(50 AS BIGINT), 'x'),"
            + " (CAST(500 AS BIGINT), 'y')) AS v(id, name)");
    TreeMap<Long, String> joined =
        names(
            collect(
                env,
                "SELECT p.id, d.name FROM probes AS p LEFT JOIN dim FOR SYSTEM_TIME AS OF p.pt"
                    + " AS d ON p.id = d.id"));
    TreeMap<Long, String> expected = new TreeMap<>();
    expected.put(1L, "d1");
    expected.put(50L, "d50");
    expected.put(500L, null);
    assertEquals(expected, joined);

    Exception e =
        assertThrows(
            Exception.class,
            () ->
                collect(
                    env,
                    "SELECT p.id, d.id FROM probes AS p JOIN dim FOR SYSTEM_TIME AS OF p.pt AS d"
                        + " ON p.name = d.name"));
    String chain = CobbleOnMiniClusterIT.causeChain(e);
    assertTrue(chain.contains("need equality conditions on the full PRIMARY KEY [id]"), chain);
  }

  /**
   * The whole product path: the SQL sink writes a table (publishing a global snapshot at the end of
   * the bounded insert), then the source scans it and serves lookups from it.
   */
  @Test
  void aTableWrittenByTheSqlSinkIsReadBackAndLookedUp() throws Exception {
    Path root = data.resolve("from-sink");
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    env.executeSql(
        "CREATE TABLE written ("
            + COLUMNS
            + ") WITH ('connector' = 'cobble', 'path' = '"
            + root.toUri()
            + "', 'bucket' = '8', 'sink.parallelism' = '2')");
    env.executeSql(
            "INSERT INTO written SELECT CAST(id AS BIGINT), CONCAT('w', CAST(id AS STRING)),"
                + " id, CAST(id AS DECIMAL(10, 2)) FROM (VALUES (1), (2), (3), (4), (5)) AS v(id)")
        .await(3, TimeUnit.MINUTES);
    TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    batch.executeSql(
        "CREATE TABLE readback ("
            + COLUMNS
            + ") WITH ('connector' = 'cobble', 'path' = '"
            + root.toUri()
            + "')");
    // Every column of every row, as written.
    TreeMap<Long, List<Object>> expectedRows = new TreeMap<>();
    for (long id = 1; id <= 5; id++) {
      expectedRows.put(id, List.of(id, "w" + id, (int) id, BigDecimal.valueOf(id * 100, 2)));
    }
    TreeMap<Long, List<Object>> rows = new TreeMap<>();
    for (Row row : collect(batch, "SELECT * FROM readback")) {
      assertEquals(RowKind.INSERT, row.getKind(), row.toString());
      rows.put(
          (Long) row.getField(0),
          List.of(row.getField(0), row.getField(1), row.getField(2), row.getField(3)));
    }
    assertEquals(expectedRows, rows);
    env.executeSql(
        "CREATE TABLE dim ("
            + COLUMNS
            + ") WITH ('connector' = 'cobble', 'path' = '"
            + root.toUri()
            + "')");
    TreeMap<Long, String> joined =
        names(
            collect(
                env,
                "SELECT p.id, d.name FROM (SELECT id, PROCTIME() AS pt FROM (VALUES"
                    + " (CAST(3 AS BIGINT)), (CAST(9 AS BIGINT))) AS v(id)) AS p LEFT JOIN dim"
                    + " FOR SYSTEM_TIME AS OF p.pt AS d ON p.id = d.id"));
    TreeMap<Long, String> expected = new TreeMap<>();
    expected.put(3L, "w3");
    expected.put(9L, null);
    assertEquals(expected, joined);
  }
}
