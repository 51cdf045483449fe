package io.cobble.flink.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.testing.flink.LoopbackMiniCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Cobble table on a scheme only Flink's file systems serve ({@link TestSchemeFileSystemFactory}),
 * end to end on a MiniCluster: the sink writes it with the account key given as a dotted {@code
 * storage.option.*} key, the source scans it and serves a lookup join, every row as written, and
 * the key is in none of the table's files.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class FlinkFileSystemTableTest {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(2);

  @TempDir Path dir;

  private String ddl(String name, Path table, String options) {
    return "CREATE TABLE "
        + name
        + " (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'cobble',"
        + " 'path' = '"
        + TestSchemeFileSystemFactory.SCHEME
        + "://"
        + table.toUri().getPath()
        + "', 'storage.option."
        + TestSchemeFileSystemFactory.ACCOUNT_KEY
        + "' = '"
        + TestSchemeFileSystemFactory.SECRET
        + "'"
        + options
        + ")";
  }

  @Test
  void theSinkWritesAndTheSourceReadsATableOnAFlinkFileSystem() throws Exception {
    Path table = dir.resolve("table");
    TableEnvironment streaming = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    streaming.executeSql(ddl("t", table, ", 'bucket' = '4', 'sink.parallelism' = '2'"));
    streaming
        .executeSql(
            "INSERT INTO t SELECT CAST(id AS BIGINT), CONCAT('n', CAST(id AS STRING)) FROM"
                + " (VALUES (1), (2), (3), (4), (5), (6)) AS v(id)")
        .await(2, TimeUnit.MINUTES);

    TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    batch.executeSql(ddl("r", table, ""));
    Map<Long, String> rows = new TreeMap<>();
    try (CloseableIterator<Row> it = batch.executeSql("SELECT id, name FROM r").collect()) {
      it.forEachRemaining(row -> rows.put((Long) row.getField(0), (String) row.getField(1)));
    }
    Map<Long, String> expected = new TreeMap<>();
    for (long id = 1; id <= 6; id++) {
      expected.put(id, "n" + id);
    }
    assertEquals(expected, rows);

    streaming.executeSql(ddl("dim", table, ""));
    Map<Long, String> joined = new TreeMap<>();
    try (CloseableIterator<Row> it =
        streaming
            .executeSql(
                "SELECT p.id, d.name FROM (SELECT id, PROCTIME() AS pt FROM (VALUES"
                    + " (CAST(2 AS BIGINT)), (CAST(9 AS BIGINT))) AS v(id)) AS p LEFT JOIN dim"
                    + " FOR SYSTEM_TIME AS OF p.pt AS d ON p.id = d.id")
            .collect()) {
      it.forEachRemaining(row -> joined.put((Long) row.getField(0), (String) row.getField(1)));
    }
    Map<Long, String> expectedJoin = new TreeMap<>();
    expectedJoin.put(2L, "n2");
    expectedJoin.put(9L, null);
    assertEquals(expectedJoin, joined);

    assertTrue(Files.isRegularFile(table.resolve("global/CURRENT")), "committed on the scheme");
    try (Stream<Path> files = Files.walk(table)) {
      for (Path file : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        String bytes = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        assertFalse(bytes.contains(TestSchemeFileSystemFactory.SECRET), "key in " + file);
      }
    }
  }
}
