package io.cobble.flink.catalog;

import static io.cobble.flink.catalog.CatalogSql.assertRejected;
import static io.cobble.flink.catalog.CatalogSql.await;
import static io.cobble.flink.catalog.CatalogSql.batch;
import static io.cobble.flink.catalog.CatalogSql.byFirst;
import static io.cobble.flink.catalog.CatalogSql.collect;
import static io.cobble.flink.catalog.CatalogSql.session;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The catalog through Flink SQL on a local MiniCluster: databases and tables, INSERT, batch scans,
 * key queries and lookup joins through one native schema, two storage ids at one path, a second
 * session on the same catalog.
 */
class CatalogSqlTest {

  private static final String ORDERS =
      "CREATE TABLE orders (order_id BIGINT NOT NULL, customer_id BIGINT NOT NULL, amount"
          + " DECIMAL(18, 2), note STRING, PRIMARY KEY (order_id, customer_id) NOT ENFORCED)";

  @TempDir Path dir;

  private String warehouse() {
    return dir.resolve("warehouse").toUri().toString();
  }

  private TableEnvironment lake(TableEnvironment env) {
    return session(env, "lake", warehouse(), 4, Collections.emptyMap());
  }

  @Test
  void databasesAndTables() throws Exception {
    TableEnvironment env = lake(batch());
    await(env, "CREATE DATABASE IF NOT EXISTS analytics");
    assertRejected(env, "CREATE DATABASE analytics", "already exists");
    await(env, "CREATE DATABASE staging");
    assertEquals(
        List.of("analytics", "default", "staging"),
        collect(env, "SHOW DATABASES").stream()
            .map(r -> (String) r.getField(0))
            .sorted()
            .collect(Collectors.toList()));
    await(env, ORDERS);
    await(env, "CREATE TABLE IF NOT EXISTS orders (x BIGINT, y INT, PRIMARY KEY (x) NOT ENFORCED)");
    assertRejected(env, ORDERS, "already exists");
    await(
        env,
        "CREATE TABLE staging.items (id INT NOT NULL, name STRING, PRIMARY KEY (id) NOT ENFORCED)");
    assertEquals(List.of(Row.of("orders")), collect(env, "SHOW TABLES"));
    List<Row> described = collect(env, "DESCRIBE orders");
    assertEquals(4, described.size());
    assertEquals("DECIMAL(18, 2)", described.get(2).getField(1));
    await(env, "ALTER TABLE staging.items RENAME TO goods");
    assertEquals(List.of(Row.of("goods")), collect(env, "SHOW TABLES IN staging"));
    assertRejected(env, "DROP DATABASE staging", "is not empty");
    assertRejected(env, "DROP DATABASE staging RESTRICT", "is not empty");
    await(env, "DROP DATABASE staging CASCADE");
    await(env, "DROP DATABASE IF EXISTS staging");
    assertRejected(env, "DROP DATABASE staging", "does not exist");
    await(env, "DROP TABLE orders");
    await(env, "DROP TABLE IF EXISTS orders");
    assertTrue(collect(env, "SHOW TABLES").isEmpty());
    assertRejected(env, "DROP TABLE orders", "does not exist");
    // A dropped table's files are gone too; only the catalog's metadata stays.
    try (Stream<Path> files = Files.walk(dir.resolve("warehouse").resolve("flink"))) {
      assertTrue(
          files.filter(Files::isRegularFile).allMatch(f -> f.toString().contains("/catalog/")),
          "only metadata left");
    }
  }

  @Test
  void insertScanKeyQueryAndLookupJoin() throws Exception {
    TableEnvironment env = lake(batch());
    await(
        env,
        "CREATE TABLE every_type (id BIGINT NOT NULL, k2 INT NOT NULL, b BOOLEAN, t TINYINT,"
            + " s SMALLINT, i INT, f FLOAT, d DOUBLE, str STRING, v VARCHAR, bin BYTES,"
            + " dcm DECIMAL(20, 4), dt DATE, tm TIME, ts TIMESTAMP(6),"
            + " PRIMARY KEY (id, k2) NOT ENFORCED)");
    await(
        env,
        "INSERT INTO every_type VALUES (1, 10, TRUE, CAST(1 AS TINYINT), CAST(2 AS SMALLINT), 3,"
            + " CAST(1.5 AS FLOAT), 2.25, 'one', 'uno', X'0102', CAST(12.3456 AS DECIMAL(20, 4)),"
            + " DATE '2024-01-02', TIME '10:11:12', TIMESTAMP '2024-01-02 10:11:12.123456')");
    await(env, "INSERT INTO every_type (id, k2) VALUES (2, 20)");
    TreeMap<Object, String> rows = byFirst(collect(env, "SELECT * FROM every_type"));
    assertEquals(
        "+I[1, 10, true, 1, 2, 3, 1.5, 2.25, one, uno, [1, 2], 12.3456, 2024-01-02, 10:11:12,"
            + " 2024-01-02T10:11:12.123456]",
        rows.get(1L));
    assertEquals(
        "+I[2, 20, null, null, null, null, null, null, null, null, null, null, null, null, null]",
        rows.get(2L));

    await(env, ORDERS);
    await(
        env,
        "INSERT INTO orders VALUES (42, 7, 19.95, 'first'), (43, 7, 5.00, 'second'),"
            + " (44, 8, CAST(NULL AS DECIMAL(18, 2)), 'third')");
    await(env, "INSERT INTO orders VALUES (42, 7, 21.00, 'updated')");
    assertEquals(
        List.of(Row.of(42L, 7L, new java.math.BigDecimal("21.00"), "updated")),
        collect(env, "SELECT * FROM orders WHERE order_id = 42 AND customer_id = 7"));
    assertEquals(3, collect(env, "SELECT * FROM orders").size());

    TableEnvironment streaming = lake(CatalogSql.streaming());
    await(
        streaming,
        "CREATE TEMPORARY VIEW probes AS SELECT oid, cid, PROCTIME() AS pt FROM (VALUES"
            + " (CAST(42 AS BIGINT), CAST(7 AS BIGINT)), (CAST(44 AS BIGINT), CAST(8 AS BIGINT)),"
            + " (CAST(45 AS BIGINT), CAST(8 AS BIGINT))) AS v(oid, cid)");
    TreeMap<Object, String> joined =
        byFirst(
            collect(
                streaming,
                "SELECT p.oid, o.amount, o.note FROM probes AS p LEFT JOIN orders FOR SYSTEM_TIME"
                    + " AS OF p.pt AS o ON p.oid = o.order_id AND p.cid = o.customer_id"));
    assertEquals("+I[42, 21.00, updated]", joined.get(42L));
    assertEquals("+I[44, null, third]", joined.get(44L));
    assertEquals("+I[45, null, null]", joined.get(45L));
  }

  @Test
  void secondSessionSeesTheSameCatalogAndStorageIdsSeparateCatalogs() throws Exception {
    TableEnvironment first = lake(batch());
    await(first, ORDERS);
    await(first, "INSERT INTO orders VALUES (1, 1, 1.00, 'a')");

    TableEnvironment second = lake(batch());
    assertEquals(List.of(Row.of("orders")), collect(second, "SHOW TABLES"));
    await(second, "INSERT INTO orders VALUES (2, 2, 2.00, 'b')");
    await(
        second,
        "CREATE TABLE made_by_second (id INT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED)");
    assertEquals(2, collect(first, "SELECT * FROM orders").size());
    assertTrue(collect(first, "SHOW TABLES").contains(Row.of("made_by_second")));

    TableEnvironment other =
        session(batch(), "other", warehouse(), 4, Map.of("storage-id", "production"));
    assertTrue(collect(other, "SHOW TABLES").isEmpty(), "another storage id sees no tables");
    await(other, ORDERS);
    await(other, "INSERT INTO orders VALUES (9, 9, 9.00, 'production')");
    assertEquals(
        List.of(Row.of(9L, 9L, new java.math.BigDecimal("9.00"), "production")),
        collect(other, "SELECT * FROM orders"));
    assertEquals(2, collect(first, "SELECT * FROM orders").size());
    assertTrue(Files.isDirectory(dir.resolve("warehouse").resolve("production")));
    assertTrue(Files.isDirectory(dir.resolve("warehouse").resolve("flink")));
  }

  @Test
  void catalogOptionsAreValidated() {
    TableEnvironment env = batch();
    assertRejected(
        env,
        CatalogSql.createCatalog("c1", warehouse(), 0, Collections.emptyMap()),
        "Option 'buckets' must be between 1 and 65536, but is 0.");
    assertRejected(
        env,
        CatalogSql.createCatalog("c2", warehouse(), 65537, Collections.emptyMap()),
        "Option 'buckets' must be between 1 and 65536, but is 65537.");
    assertRejected(
        env,
        "CREATE CATALOG c3 WITH ('type' = 'cobble', 'path' = '" + warehouse() + "')",
        "buckets");
    assertRejected(
        env,
        CatalogSql.createCatalog("c4", warehouse(), 4, Map.of("s3.access-key", "AKIA")),
        "Option 's3.access-key' applies to an s3:// warehouse");
    assertRejected(
        env,
        CatalogSql.createCatalog("c5", warehouse(), 4, Map.of("storage-id", "../up")),
        "Option 'storage-id' must be a non-empty name");
    assertRejected(
        env,
        CatalogSql.createCatalog("c6", warehouse(), 4, Map.of("bucket-count", "3")),
        "bucket-count");
    assertRejected(
        env,
        CatalogSql.createCatalog(
            "c7",
            "s3://bucket/wh",
            4,
            Map.of("s3.endpoint", "http://a", "storage.option.endpoint", "http://b")),
        "Options 's3.endpoint' and 'storage.option.endpoint' set the same s3 setting");
    env.executeSql(CatalogSql.createCatalog("c8", warehouse(), 4, Collections.emptyMap()));
    assertRejected(
        env,
        CatalogSql.createCatalog("c9", warehouse(), 8, Collections.emptyMap()),
        "Option 'buckets' is 8, but the Cobble catalog at");
  }

  @Test
  void tableDefinitionsOutsideTheRulesAreRejected() {
    TableEnvironment env = lake(batch());
    String[][] cases = {
      {"CREATE TABLE t (id BIGINT, v INT)", "has no PRIMARY KEY"},
      {
        "CREATE TABLE t (id BIGINT NOT NULL, PRIMARY KEY (id) NOT ENFORCED)",
        "needs at least one column outside the primary key"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v VARCHAR(10), PRIMARY KEY (id) NOT ENFORCED)",
        "Column 'v' has the bounded type VARCHAR(10)"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v CHAR(3), PRIMARY KEY (id) NOT ENFORCED)",
        "Column 'v' has the bounded type CHAR(3)"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v VARBINARY(8), PRIMARY KEY (id) NOT ENFORCED)",
        "Column 'v' has the bounded type VARBINARY(8)"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v BINARY(8), PRIMARY KEY (id) NOT ENFORCED)",
        "Column 'v' has the bounded type BINARY(8)"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v ARRAY<INT>, PRIMARY KEY (id) NOT ENFORCED)",
        "Column 'v' has type ARRAY<INT>, which the Cobble catalog does not support"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v TIMESTAMP_LTZ(3), PRIMARY KEY (id) NOT ENFORCED)",
        "Column 'v' has type TIMESTAMP_LTZ(3), which the Cobble catalog does not support"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v INT, w AS v + 1, PRIMARY KEY (id) NOT ENFORCED)",
        "Column 'w' of table 'analytics.t' is a computed column"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, ts TIMESTAMP(3), WATERMARK FOR ts AS ts,"
            + " PRIMARY KEY (id) NOT ENFORCED)",
        "declares a WATERMARK"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED)"
            + " PARTITIONED BY (v)",
        "is PARTITIONED BY [v]"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED) COMMENT 'x'",
        "Table 'analytics.t' has a COMMENT"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v INT COMMENT 'c', PRIMARY KEY (id) NOT ENFORCED)",
        "Column 'v' of table 'analytics.t' has a COMMENT"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('connector' = 'cobble')",
        "has table options [connector]"
      },
      {"CREATE VIEW t AS SELECT 1 AS x", "the Cobble catalog stores tables only"},
      {"CREATE DATABASE commented COMMENT 'x'", "Database 'commented' has a COMMENT"},
      {"CREATE DATABASE props WITH ('k' = 'v')", "Database 'props' has properties [k]"},
    };
    for (String[] c : cases) {
      assertRejected(env, c[0], c[1]);
    }
    assertFalse(Arrays.asList(env.listTables()).contains("t"));
  }
}
