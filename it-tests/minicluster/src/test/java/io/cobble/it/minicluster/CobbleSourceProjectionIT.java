package io.cobble.it.minicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.testing.flink.LoopbackMiniCluster;
import io.cobble.testing.table.TestSinkTable;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads that read less, on this line's MiniCluster: a source DDL naming the table's columns in
 * another order and only some value columns, the planner's projection pushed into scans and lookup
 * joins, and async lookups. Every test compares whole rows, values included.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CobbleSourceProjectionIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  private static final RowType ROW =
      RowType.of(
          new LogicalType[] {
            new BigIntType(false),
            new VarCharType(VarCharType.MAX_LENGTH),
            new IntType(),
            new DecimalType(10, 2)
          },
          new String[] {"id", "name", "score", "price"});

  private static final int ROWS = 200;

  @TempDir Path data;

  private Path root;

  @BeforeEach
  void writeTable() throws Exception {
    root = data.resolve("table");
    try (TestSinkTable table =
        new TestSinkTable(root, data.resolve("work"), ROW, List.of("id"), 8, 3, 0)) {
      for (long id = 1; id <= ROWS; id++) {
        table.upsert(
            id,
            StringData.fromString("n" + id),
            id % 5 == 0 ? null : (int) (id * 10),
            DecimalData.fromBigDecimal(BigDecimal.valueOf(id, 2), 10, 2));
      }
      table.commit();
    }
  }

  private static Integer score(long id) {
    return id % 5 == 0 ? null : (int) (id * 10);
  }

  private String create(String name, String columns, String options) {
    return "CREATE TABLE "
        + name
        + " ("
        + columns
        + ") WITH ('connector' = 'cobble', 'path' = '"
        + root.toUri()
        + "'"
        + options
        + ")";
  }

  private static List<Row> collect(TableEnvironment env, String query) throws Exception {
    List<Row> rows = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql(query).collect()) {
      it.forEachRemaining(rows::add);
    }
    for (Row row : rows) {
      assertEquals(RowKind.INSERT, row.getKind(), row.toString());
    }
    return rows;
  }

  /** Rows keyed by their field {@code keyField}, as lists of all their fields. */
  private static TreeMap<Long, List<Object>> byKey(List<Row> rows, int keyField) {
    TreeMap<Long, List<Object>> out = new TreeMap<>();
    for (Row row : rows) {
      List<Object> fields = new ArrayList<>();
      for (int i = 0; i < row.getArity(); i++) {
        fields.add(row.getField(i));
      }
      assertEquals(null, out.put((Long) row.getField(keyField), fields), "twice: " + row);
    }
    return out;
  }

  private static TableEnvironment batch() {
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.getConfig().getConfiguration().setString("parallelism.default", "2");
    return env;
  }

  @Test
  void aDdlWithColumnsReorderedAndLeftOutReadsThemByName() throws Exception {
    TableEnvironment env = batch();
    // Key last, price before score, name left out.
    env.executeSql(
        create(
            "t",
            "price DECIMAL(10, 2), score INT, id BIGINT, PRIMARY KEY (id) NOT ENFORCED",
            ", 'source.kind' = 'sink'"));
    TreeMap<Long, List<Object>> expected = new TreeMap<>();
    for (long id = 1; id <= ROWS; id++) {
      expected.put(id, Arrays.asList(BigDecimal.valueOf(id, 2), score(id), id));
    }
    assertEquals(expected, byKey(collect(env, "SELECT * FROM t"), 2));
  }

  @Test
  void aScanOfSomeColumnsIsPushedDownAndReturnsTheirValues() throws Exception {
    TableEnvironment env = batch();
    env.executeSql(
        create(
            "t",
            "id BIGINT, name STRING, score INT, price DECIMAL(10, 2), PRIMARY KEY (id) NOT ENFORCED",
            ""));
    String query = "SELECT score, id FROM t";
    String plan = env.explainSql(query);
    assertTrue(plan.contains("project=[score, id]"), plan);
    TreeMap<Long, List<Object>> expected = new TreeMap<>();
    for (long id = 1; id <= ROWS; id++) {
      expected.put(id, Arrays.asList(score(id), id));
    }
    assertEquals(expected, byKey(collect(env, query), 1));
    // Without the key: every row still arrives (score is NULL in a fifth of them).
    List<Object> prices = new ArrayList<>();
    for (Row row : collect(env, "SELECT price FROM t")) {
      prices.add(row.getField(0));
    }
    prices.sort(null);
    List<Object> expectedPrices = new ArrayList<>();
    for (long id = 1; id <= ROWS; id++) {
      expectedPrices.add(BigDecimal.valueOf(id, 2));
    }
    assertEquals(expectedPrices, prices);
    List<Row> scores = collect(env, "SELECT score FROM t");
    assertEquals(ROWS, scores.size(), "rows whose only read column is NULL are kept");
  }

  @Test
  void aMissingOrMistypedColumnIsNamed() {
    TableEnvironment env = batch();
    env.executeSql(create("missing", "id BIGINT, nick STRING, PRIMARY KEY (id) NOT ENFORCED", ""));
    String chain =
        CobbleOnMiniClusterIT.causeChain(
            assertThrows(Exception.class, () -> collect(env, "SELECT * FROM missing")));
    assertTrue(chain.contains("column 'nick' is in the DDL but not in the table"), chain);
    env.executeSql(
        create("mistyped", "score BIGINT, id BIGINT, PRIMARY KEY (id) NOT ENFORCED", ""));
    chain =
        CobbleOnMiniClusterIT.causeChain(
            assertThrows(Exception.class, () -> collect(env, "SELECT * FROM mistyped")));
    assertTrue(chain.contains("column 'score' is BIGINT in the DDL but INT in the table"), chain);
  }

  @Test
  void syncAndAsyncLookupJoinsReturnTheSameValuesOfTheProjectedColumns() throws Exception {
    for (String async : new String[] {"false", "true"}) {
      TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
      env.getConfig().getConfiguration().setString("parallelism.default", "2");
      env.executeSql(
          create(
              "dim",
              "score INT, name STRING, id BIGINT, price DECIMAL(10, 2),"
                  + " PRIMARY KEY (id) NOT ENFORCED",
              ", 'lookup.async' = '" + async + "', 'lookup.async.max-in-flight' = '3'"));
      StringBuilder values = new StringBuilder();
      for (long id = 1; id <= 60; id++) {
        values.append(id == 1 ? "" : ", ").append("(CAST(").append(id * 4).append(" AS BIGINT))");
      }
      env.executeSql(
          "CREATE TEMPORARY VIEW probes AS SELECT id, PROCTIME() AS pt FROM (VALUES "
              + values
              + ") AS v(id)");
      String query =
          "SELECT p.id, d.score, d.name, d.id FROM probes AS p LEFT JOIN dim FOR SYSTEM_TIME AS OF"
              + " p.pt AS d ON p.id = d.id";
      String plan = env.explainSql(query);
      assertEquals(async.equals("true"), plan.contains("async=["), plan);
      TreeMap<Long, List<Object>> expected = new TreeMap<>();
      for (long id = 4; id <= 240; id += 4) {
        expected.put(
            id,
            id <= ROWS
                ? Arrays.asList(id, score(id), "n" + id, id)
                : Arrays.asList(id, null, null, null));
      }
      assertEquals(expected, byKey(collect(env, query), 0), "lookup.async = " + async);
    }
  }
}
