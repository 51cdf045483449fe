package io.cobble.it.minicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.cobble.testing.S3ProxyServer;
import io.cobble.testing.flink.LoopbackMiniCluster;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Cobble catalog ({@code 'type' = 'cobble'}) with this line's dist jar: databases, tables,
 * INSERT, scans, key queries, lookup joins, ALTER TABLE (older snapshots read through the new
 * schema), every rejection with its message, two storage ids at one path, a second session, and a
 * catalog on S3Proxy whose objects hold no credentials.
 */
class CobbleCatalogIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  @TempDir Path dir;

  private static TableEnvironment batch() {
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.getConfig().getConfiguration().setString("parallelism.default", "2");
    return env;
  }

  private static TableEnvironment streaming() {
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    env.getConfig().getConfiguration().setString("parallelism.default", "1");
    return env;
  }

  private static TableEnvironment session(
      TableEnvironment env, String catalog, String path, Map<String, String> extra) {
    StringBuilder ddl =
        new StringBuilder("CREATE CATALOG ")
            .append(catalog)
            .append(" WITH ('type' = 'cobble', 'path' = '")
            .append(path)
            .append("', 'buckets' = '4'");
    extra.forEach((k, v) -> ddl.append(", '").append(k).append("' = '").append(v).append("'"));
    env.executeSql(ddl.append(")").toString());
    env.executeSql("USE CATALOG " + catalog);
    env.executeSql("CREATE DATABASE IF NOT EXISTS analytics");
    env.executeSql("USE analytics");
    return env;
  }

  private String warehouse() {
    return dir.resolve("warehouse").toUri().toString();
  }

  private static void run(TableEnvironment env, String statement) throws Exception {
    env.executeSql(statement).await();
  }

  private static List<Row> collect(TableEnvironment env, String query) throws Exception {
    List<Row> rows = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql(query).collect()) {
      it.forEachRemaining(rows::add);
    }
    return rows;
  }

  private static TreeMap<Object, String> byFirst(List<Row> rows) {
    TreeMap<Object, String> map = new TreeMap<>();
    rows.forEach(r -> map.put(r.getField(0), r.toString()));
    return map;
  }

  private static void assertRejected(TableEnvironment env, String statement, String message) {
    Throwable thrown = assertThrows(Throwable.class, () -> env.executeSql(statement).await());
    StringBuilder seen = new StringBuilder();
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      if (t.getMessage() != null && t.getMessage().contains(message)) {
        return;
      }
      seen.append("\n  ").append(t);
    }
    fail(statement + ": no exception says '" + message + "':" + seen);
  }

  @Test
  void createWriteReadLookUpAlterAndReadAgain() throws Exception {
    TableEnvironment env = session(batch(), "lake", warehouse(), Map.of());
    run(env, "CREATE DATABASE IF NOT EXISTS analytics");
    run(
        env,
        "CREATE TABLE orders (order_id BIGINT NOT NULL, customer_id BIGINT NOT NULL, amount"
            + " DECIMAL(18, 2), qty INT, note STRING, PRIMARY KEY (order_id, customer_id) NOT"
            + " ENFORCED)");
    assertEquals(List.of(Row.of("orders")), collect(env, "SHOW TABLES"));
    run(
        env,
        "INSERT INTO orders VALUES (42, 7, 19.95, 1, 'a'), (43, 7, 5.00, 2, 'b'),"
            + " (44, 8, 1.00, 3, 'c')");
    assertEquals(
        List.of(Row.of(42L, 7L, new BigDecimal("19.95"), 1, "a")),
        collect(env, "SELECT * FROM orders WHERE order_id = 42 AND customer_id = 7"));

    TableEnvironment lookups = session(streaming(), "lake", warehouse(), Map.of());
    run(
        lookups,
        "CREATE TEMPORARY VIEW probes AS SELECT oid, cid, PROCTIME() AS pt FROM (VALUES"
            + " (CAST(42 AS BIGINT), CAST(7 AS BIGINT)), (CAST(45 AS BIGINT), CAST(8 AS BIGINT)))"
            + " AS v(oid, cid)");
    TreeMap<Object, String> joined =
        byFirst(
            collect(
                lookups,
                "SELECT p.oid, o.note FROM probes AS p LEFT JOIN orders FOR SYSTEM_TIME AS OF"
                    + " p.pt AS o ON p.oid = o.order_id AND p.cid = o.customer_id"));
    assertEquals("+I[42, a]", joined.get(42L));
    assertEquals("+I[45, null]", joined.get(45L));

    run(env, "ALTER TABLE orders ADD channel STRING");
    run(env, "ALTER TABLE orders MODIFY qty BIGINT");
    run(env, "ALTER TABLE orders MODIFY amount DECIMAL(20, 2)");
    run(env, "ALTER TABLE orders RENAME note TO remark");
    run(env, "ALTER TABLE orders DROP remark");
    TreeMap<Object, String> altered = byFirst(collect(env, "SELECT * FROM orders"));
    assertEquals("+I[43, 7, 5.00, 2, null]", altered.get(43L));
    run(env, "INSERT INTO orders VALUES (45, 8, 2.50, 5000000000, 'web')");
    altered = byFirst(collect(env, "SELECT * FROM orders"));
    assertEquals(4, altered.size());
    assertEquals("+I[45, 8, 2.50, 5000000000, web]", altered.get(45L));

    TableEnvironment second = session(batch(), "lake", warehouse(), Map.of());
    assertEquals(4, collect(second, "SELECT * FROM orders").size());
    run(second, "ALTER TABLE orders RENAME TO orders_v2");
    assertEquals(List.of(Row.of("orders_v2")), collect(env, "SHOW TABLES"));

    TableEnvironment other =
        session(batch(), "other", warehouse(), Map.of("storage-id", "production"));
    assertTrue(collect(other, "SHOW TABLES").isEmpty());

    assertRejected(
        env,
        "INSERT INTO orders_v2 /*+ OPTIONS('sink.parallelism' = '2') */"
            + " VALUES (1, 1, 1.00, 1, 'x')",
        "keeps its writer parallelism");
    run(env, "USE `default`");
    assertRejected(env, "DROP DATABASE analytics", "is not empty");
    run(env, "DROP DATABASE analytics CASCADE");
    assertFalse(collect(env, "SHOW DATABASES").contains(Row.of("analytics")));
  }

  @Test
  void everyRejectionNamesItsConstruct() throws Exception {
    TableEnvironment env = batch();
    assertRejected(
        env,
        "CREATE CATALOG bad WITH ('type' = 'cobble', 'path' = '"
            + warehouse()
            + "', 'buckets' = '70000')",
        "Option 'buckets' must be between 1 and 65536");
    String[][] catalogs = {
      {"'buckets' = '0'", "Option 'buckets' must be between 1 and 65536, but is 0"},
      {"'buckets' = '4', 's3.access-key' = 'AK'", "Option 's3.access-key' applies to an s3://"},
      {"'buckets' = '4', 'storage-id' = '../up'", "Option 'storage-id' must be a non-empty name"},
      {"'buckets' = '4', 'bucket-count' = '3'", "bucket-count"},
    };
    for (int i = 0; i < catalogs.length; i++) {
      assertRejected(
          env,
          "CREATE CATALOG bad"
              + i
              + " WITH ('type' = 'cobble', 'path' = '"
              + warehouse()
              + "', "
              + catalogs[i][0]
              + ")",
          catalogs[i][1]);
    }
    assertRejected(
        env,
        "CREATE CATALOG nobuckets WITH ('type' = 'cobble', 'path' = '" + warehouse() + "')",
        "buckets");
    assertRejected(
        env,
        "CREATE CATALOG twice WITH ('type' = 'cobble', 'path' = 's3://b/w', 'buckets' = '4',"
            + " 's3.endpoint' = 'http://a', 'storage.option.endpoint' = 'http://b')",
        "Options 's3.endpoint' and 'storage.option.endpoint' set the same s3 setting");
    env = session(batch(), "lake", warehouse(), Map.of());
    assertRejected(
        batch(),
        "CREATE CATALOG wider WITH ('type' = 'cobble', 'path' = '"
            + warehouse()
            + "', 'buckets' = '8')",
        "Option 'buckets' is 8, but the Cobble catalog at");
    String[][] cases = {
      {"CREATE TABLE t (id BIGINT, v INT)", "has no PRIMARY KEY"},
      {"CREATE TABLE t (id BIGINT NOT NULL, PRIMARY KEY (id) NOT ENFORCED)", "at least one column"},
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v VARCHAR(5), PRIMARY KEY (id) NOT ENFORCED)",
        "bounded type VARCHAR(5)"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v VARBINARY(5), PRIMARY KEY (id) NOT ENFORCED)",
        "bounded type VARBINARY(5)"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v MAP<INT, INT>, PRIMARY KEY (id) NOT ENFORCED)",
        "which the Cobble catalog does not support"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v INT, w AS v * 2, PRIMARY KEY (id) NOT ENFORCED)",
        "is a computed column"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, ts TIMESTAMP(3), WATERMARK FOR ts AS ts,"
            + " PRIMARY KEY (id) NOT ENFORCED)",
        "declares a WATERMARK"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED)"
            + " PARTITIONED BY (v)",
        "is PARTITIONED BY"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED) COMMENT 'c'",
        "has a COMMENT"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v INT COMMENT 'c', PRIMARY KEY (id) NOT ENFORCED)",
        "Column 'v' of table 'analytics.t' has a COMMENT"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('path' = '/x')",
        "has table options [path]"
      },
      {"CREATE DATABASE d COMMENT 'c'", "Database 'd' has a COMMENT"},
      {"CREATE DATABASE d WITH ('k' = 'v')", "Database 'd' has properties [k]"},
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v CHAR(3), PRIMARY KEY (id) NOT ENFORCED)",
        "bounded type CHAR(3)"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v BINARY(3), PRIMARY KEY (id) NOT ENFORCED)",
        "bounded type BINARY(3)"
      },
      {
        "CREATE TABLE t (id BIGINT NOT NULL, v TIMESTAMP_LTZ(3), PRIMARY KEY (id) NOT ENFORCED)",
        "has type TIMESTAMP_LTZ(3), which the Cobble catalog does not support"
      },
      {"CREATE VIEW t AS SELECT 1 AS x", "the Cobble catalog stores tables only"},
    };
    for (String[] c : cases) {
      assertRejected(env, c[0], c[1]);
    }
    run(
        env,
        "CREATE TABLE t (id BIGINT NOT NULL, a INT, c DECIMAL(10, 2), f STRING,"
            + " ts TIMESTAMP(3), PRIMARY KEY (id) NOT ENFORCED)");
    String[][] alters = {
      {"ALTER TABLE t MODIFY id INT NOT NULL", "PRIMARY KEY column 'id'"},
      {"ALTER TABLE t MODIFY a SMALLINT", "from INT to SMALLINT"},
      {"ALTER TABLE t MODIFY a STRING", "from INT to STRING"},
      {"ALTER TABLE t MODIFY c DECIMAL(12, 3)", "keeps its scale"},
      {"ALTER TABLE t MODIFY ts TIMESTAMP(0)", "lowering precision"},
      {"ALTER TABLE t ADD g INT NOT NULL", "must be nullable"},
      {"ALTER TABLE t ADD g INT FIRST", "new columns are appended"},
      {"ALTER TABLE t SET ('k' = 'v')", "sets or resets table options"},
      {"ALTER TABLE t ADD WATERMARK FOR ts AS ts", "changes a WATERMARK"},
      {"ALTER TABLE t DROP PRIMARY KEY", "changes the PRIMARY KEY"},
      {"ALTER TABLE t MODIFY a DOUBLE", "from INT to DOUBLE"},
      {"ALTER TABLE t MODIFY a INT NOT NULL", "a column cannot become NOT NULL"},
      {"ALTER TABLE t MODIFY c DECIMAL(8, 2)", "lowering DECIMAL precision"},
      {"ALTER TABLE t MODIFY f VARCHAR(10)", "bounded type VARCHAR(10)"},
      {"ALTER TABLE t ADD g INT AFTER a", "new columns are appended"},
      {"ALTER TABLE t ADD g VARBINARY(3)", "bounded type VARBINARY(3)"},
      {"ALTER TABLE t ADD g AS a + 1", "is a computed column"},
      {"ALTER TABLE t ADD g INT COMMENT 'x'", "Column 'g' of table 'analytics.t' has a COMMENT"},
      {"ALTER TABLE t MODIFY a INT COMMENT 'x'", "sets a comment on column 'a'"},
      {"ALTER TABLE t MODIFY a INT FIRST", "moves column 'a'"},
    };
    for (String[] c : alters) {
      assertRejected(env, c[0], c[1]);
    }
    run(env, "ALTER TABLE t DROP (a, c, f)");
    assertRejected(env, "ALTER TABLE t DROP ts", "the last column outside the PRIMARY KEY");
    assertRejected(env, "SELECT * FROM t", "has no committed rows yet");
  }

  @Test
  void catalogOnObjectStorageWritesNoCredentials() throws Exception {
    Path blobs = dir.resolve("blobs");
    try (S3ProxyServer s3 = S3ProxyServer.start(blobs, "lake")) {
      Map<String, String> storage = s3.clientOptions();
      Map<String, String> options = new TreeMap<>();
      options.put("s3.endpoint", storage.get("endpoint"));
      options.put("s3.access-key", storage.get("access_key_id"));
      options.put("s3.secret-key", storage.get("secret_access_key"));
      options.put("storage.option.enable_virtual_host_style", "false");
      TableEnvironment env = session(batch(), "lake", "s3://lake/wh", options);
      run(
          env,
          "CREATE TABLE users (id BIGINT NOT NULL, name STRING, PRIMARY KEY (id) NOT ENFORCED)");
      run(env, "INSERT INTO users VALUES (1, 'ann'), (2, 'bob')");
      run(env, "ALTER TABLE users ADD score INT");
      run(env, "INSERT INTO users VALUES (3, 'cy', 30)");
      TreeMap<Object, String> rows = byFirst(collect(env, "SELECT * FROM users"));
      assertEquals("+I[1, ann, null]", rows.get(1L));
      assertEquals("+I[3, cy, 30]", rows.get(3L));
      List<Path> files;
      try (Stream<Path> walk = Files.walk(blobs)) {
        files = walk.filter(Files::isRegularFile).collect(Collectors.toList());
      }
      assertTrue(files.stream().anyMatch(f -> f.toString().contains("/wh/flink/catalog/")));
      for (Path file : files) {
        String content = readIfPresent(file);
        assertFalse(content.contains(storage.get("secret_access_key")), "secret in " + file);
        assertFalse(content.contains(storage.get("access_key_id")), "access key in " + file);
      }
    }
  }

  /** A file's bytes as text; empty for one a reader's pin release deleted since it was listed. */
  private static String readIfPresent(Path file) throws java.io.IOException {
    try {
      return new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
    } catch (java.nio.file.NoSuchFileException deleted) {
      return "";
    }
  }
}
