package io.cobble.flink.catalog;

import static io.cobble.flink.catalog.CatalogSql.assertRejected;
import static io.cobble.flink.catalog.CatalogSql.await;
import static io.cobble.flink.catalog.CatalogSql.batch;
import static io.cobble.flink.catalog.CatalogSql.byFirst;
import static io.cobble.flink.catalog.CatalogSql.collect;
import static io.cobble.flink.catalog.CatalogSql.session;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ALTER TABLE on catalog tables: the supported changes, read through the new schema even from a
 * snapshot committed before them; every other change rejected with a message naming it.
 */
class CatalogAlterTest {

  @TempDir Path dir;

  private TableEnvironment lake() {
    return session(
        batch(), "lake", dir.resolve("wh").toUri().toString(), 4, Collections.emptyMap());
  }

  private static List<String> columns(TableEnvironment env, String table) throws Exception {
    return collect(env, "DESCRIBE " + table).stream()
        .map(r -> r.getField(0) + " " + r.getField(1))
        .collect(Collectors.toList());
  }

  @Test
  void supportedChangesReadOlderSnapshotsThroughTheNewSchema() throws Exception {
    TableEnvironment env = lake();
    await(
        env,
        "CREATE TABLE t (id BIGINT NOT NULL, a INT, b FLOAT, c DECIMAL(10, 2), d TIMESTAMP(3),"
            + " e STRING, s SMALLINT, tm TIME(0), PRIMARY KEY (id) NOT ENFORCED)");
    await(
        env,
        "INSERT INTO t VALUES (1, -7, CAST(1.5 AS FLOAT), 12.34, TIMESTAMP '2024-01-01"
            + " 00:00:01.123', 'gone', CAST(-3 AS SMALLINT), TIME '01:02:03'), (2, 2147483647,"
            + " CAST(-0.25 AS FLOAT), -1.00, TIMESTAMP '2024-01-01 00:00:02', 'gone too',"
            + " CAST(32767 AS SMALLINT), TIME '23:59:59')");
    await(env, "ALTER TABLE t ADD f STRING");
    await(env, "ALTER TABLE t DROP e");
    await(env, "ALTER TABLE t RENAME a TO a2");
    await(env, "ALTER TABLE t MODIFY a2 BIGINT");
    await(env, "ALTER TABLE t MODIFY b DOUBLE");
    await(env, "ALTER TABLE t MODIFY c DECIMAL(14, 2)");
    await(env, "ALTER TABLE t MODIFY d TIMESTAMP(6)");
    await(env, "ALTER TABLE t MODIFY s BIGINT");
    // A new column named like the dropped one is a new column: it never shows the old values.
    await(env, "ALTER TABLE t ADD e STRING");
    assertEquals(
        List.of(
            "id BIGINT",
            "a2 BIGINT",
            "b DOUBLE",
            "c DECIMAL(14, 2)",
            "d TIMESTAMP(6)",
            "s BIGINT",
            "tm TIME(0)",
            "f STRING",
            "e STRING"),
        columns(env, "t"));

    // No write since the ALTERs: the snapshot written before them, read through the new schema.
    TreeMap<Object, String> before = byFirst(collect(env, "SELECT * FROM t"));
    assertEquals(
        "+I[1, -7, 1.5, 12.34, 2024-01-01T00:00:01.123, -3, 01:02:03, null, null]", before.get(1L));
    assertEquals(
        "+I[2, 2147483647, -0.25, -1.00, 2024-01-01T00:00:02, 32767, 23:59:59, null, null]",
        before.get(2L));
    assertEquals(
        List.of(Row.of(2L, 2147483647L)), collect(env, "SELECT id, a2 FROM t WHERE id = 2"));

    await(
        env,
        "INSERT INTO t VALUES (3, 9000000000, 1e300, 123456789012.34, TIMESTAMP '2024-01-01"
            + " 00:00:03.123456', 9000000000, TIME '12:00:00', 'new', 'e again')");
    TreeMap<Object, String> after = byFirst(collect(env, "SELECT * FROM t"));
    assertEquals(before.get(1L), after.get(1L));
    assertEquals(
        "+I[3, 9000000000, 1.0E300, 123456789012.34, 2024-01-01T00:00:03.123456, 9000000000,"
            + " 12:00, new, e again]",
        after.get(3L));
    assertEquals(3, after.size());
  }

  @Test
  void everyOtherChangeIsRejected() throws Exception {
    TableEnvironment env = lake();
    await(
        env,
        "CREATE TABLE t (id BIGINT NOT NULL, a INT, c DECIMAL(10, 2), f STRING, ts TIMESTAMP(3),"
            + " PRIMARY KEY (id) NOT ENFORCED)");
    String[][] cases = {
      {"ALTER TABLE t MODIFY id INT NOT NULL", "changes the type of PRIMARY KEY column 'id'"},
      {"ALTER TABLE t MODIFY a SMALLINT", "Cannot change column 'a' from INT to SMALLINT"},
      {"ALTER TABLE t MODIFY a STRING", "Cannot change column 'a' from INT to STRING"},
      {"ALTER TABLE t MODIFY a DOUBLE", "Cannot change column 'a' from INT to DOUBLE"},
      {"ALTER TABLE t MODIFY a INT NOT NULL", "a column cannot become NOT NULL"},
      {"ALTER TABLE t MODIFY c DECIMAL(12, 3)", "a DECIMAL column keeps its scale"},
      {"ALTER TABLE t MODIFY c DECIMAL(8, 2)", "lowering DECIMAL precision"},
      {"ALTER TABLE t MODIFY ts TIMESTAMP(0)", "lowering precision"},
      {"ALTER TABLE t MODIFY f VARCHAR(10)", "Column 'f' has the bounded type VARCHAR(10)"},
      {"ALTER TABLE t ADD g INT NOT NULL", "adds column 'g' as NOT NULL"},
      {"ALTER TABLE t ADD g INT FIRST", "adds column 'g' before other columns"},
      {"ALTER TABLE t ADD g INT AFTER a", "adds column 'g' before other columns"},
      {"ALTER TABLE t ADD g VARBINARY(3)", "Column 'g' has the bounded type VARBINARY(3)"},
      {"ALTER TABLE t ADD g AS a + 1", "Column 'g' of table 'analytics.t' is a computed column"},
      {"ALTER TABLE t ADD g INT COMMENT 'x'", "Column 'g' of table 'analytics.t' has a COMMENT"},
      {"ALTER TABLE t MODIFY a INT COMMENT 'x'", "sets a comment on column 'a'"},
      {"ALTER TABLE t MODIFY a INT FIRST", "moves column 'a'"},
      {"ALTER TABLE t SET ('k' = 'v')", "sets or resets table options"},
      {"ALTER TABLE t ADD WATERMARK FOR ts AS ts", "changes a WATERMARK"},
      {"ALTER TABLE t DROP PRIMARY KEY", "changes the PRIMARY KEY"},
    };
    for (String[] c : cases) {
      assertRejected(env, c[0], c[1]);
    }
    assertEquals(
        List.of("id BIGINT", "a INT", "c DECIMAL(10, 2)", "f STRING", "ts TIMESTAMP(3)"),
        columns(env, "t"),
        "nothing of a rejected ALTER is applied");
    await(env, "ALTER TABLE t DROP (a, c, f)");
    assertRejected(env, "ALTER TABLE t DROP ts", "the last column outside the PRIMARY KEY");
  }

  @Test
  void aCatalogTableKeepsItsWriterParallelism() throws Exception {
    TableEnvironment env = lake();
    await(env, "CREATE TABLE t (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED)");
    await(env, "INSERT INTO t /*+ OPTIONS('sink.parallelism' = '2') */ VALUES (1, 'a'), (2, 'b')");
    assertRejected(
        env,
        "INSERT INTO t VALUES (3, 'c')",
        "Catalog table lake.analytics.t was written with 2 writers, and a catalog table"
            + " keeps its writer parallelism: write it with /*+ OPTIONS('sink.parallelism' = '2')"
            + " */ (it is 1, the catalog default)");
    assertRejected(
        env,
        "INSERT INTO t /*+ OPTIONS('sink.parallelism' = '3') */ VALUES (3, 'c')",
        "was written with 2 writers");
    await(env, "INSERT INTO t /*+ OPTIONS('sink.parallelism' = '2') */ VALUES (3, 'c')");
    assertEquals(3, collect(env, "SELECT * FROM t").size());
    assertRejected(
        env, "INSERT INTO t /*+ OPTIONS('path' = '/tmp/elsewhere') */ VALUES (4, 'd')", "path");
  }

  @Test
  void shardSnapshotsNoRetainedGlobalSnapshotUsesAreCollected() throws Exception {
    TableEnvironment env = lake();
    await(env, "CREATE TABLE t (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED)");
    for (int round = 0; round < 6; round++) {
      await(
          env,
          "INSERT INTO t /*+ OPTIONS('sink.parallelism' = '2', 'snapshot.retention' = '2') */"
              + " VALUES ("
              + round
              + ", 'r"
              + round
              + "'), ("
              + (round + 100)
              + ", 'x')");
    }
    assertEquals(12, collect(env, "SELECT * FROM t").size());
    Path tables = dir.resolve("wh").resolve("flink").resolve("tables");
    Path root;
    try (java.util.stream.Stream<Path> list = java.nio.file.Files.list(tables)) {
      root = list.findFirst().get();
    }
    try (Storage storage = StorageProviders.open(root.toUri(), StorageOptions.empty())) {
      SnapshotStore store = new SnapshotStore(storage);
      assertEquals(2, store.globalIds().size(), "snapshot.retention = 2");
      java.util.Set<String> referenced = new java.util.TreeSet<>();
      for (long id : store.globalIds()) {
        store
            .requireGlobal(id)
            .parts()
            .forEach(p -> referenced.add(p.shardId() + "@" + p.snapshotId()));
      }
      java.util.Set<String> present = new java.util.TreeSet<>();
      for (String shard : store.shardIds()) {
        for (long id : store.snapshotIds(shard)) {
          present.add(shard + "@" + id);
        }
      }
      assertEquals(referenced, present, "only shard snapshots a retained global snapshot uses");
      java.util.Set<String> live = new java.util.TreeSet<>();
      for (String snapshot : present) {
        String[] parts = snapshot.split("@");
        store
            .require(parts[0], Long.parseLong(parts[1]))
            .files()
            .forEach(f -> live.add(f.volumePath()));
      }
      java.util.Set<String> stored = new java.util.TreeSet<>();
      for (String shard : store.shardIds()) {
        stored.addAll(store.dataFiles(shard));
      }
      assertEquals(live, stored, "only data files a retained shard snapshot lists");
    }
  }
}
