package io.cobble.flink.catalog;

import static io.cobble.flink.catalog.CatalogSql.await;
import static io.cobble.flink.catalog.CatalogSql.batch;
import static io.cobble.flink.catalog.CatalogSql.byFirst;
import static io.cobble.flink.catalog.CatalogSql.collect;
import static io.cobble.flink.catalog.CatalogSql.session;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.table.api.TableEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A catalog on {@code s3://} (a real S3Proxy with authentication on), configured with the
 * Flink-style {@code s3.access-key}, {@code s3.secret-key} and {@code s3.endpoint}: tables written,
 * scanned, looked up and altered; then every object the catalog and its tables wrote is searched
 * for the credentials.
 */
class CatalogOnObjectStorageTest {

  @TempDir Path dir;

  @Test
  void tablesOnS3AndNoCredentialsInAnyObject() throws Exception {
    try (S3Fixture s3 = new S3Fixture(dir)) {
      String warehouse = "s3://" + S3Fixture.BUCKET + "/warehouse";
      TableEnvironment env = session(batch(), "lake", warehouse, 4, s3.catalogOptions());
      await(
          env,
          "CREATE TABLE users (id BIGINT NOT NULL, name STRING, score INT,"
              + " PRIMARY KEY (id) NOT ENFORCED)");
      await(
          env,
          "INSERT INTO users /*+ OPTIONS('sink.parallelism' = '2') */ VALUES (1, 'ann', 10),"
              + " (2, 'bob', 20), (3, 'cy', 30)");
      await(env, "ALTER TABLE users MODIFY score BIGINT");
      await(env, "ALTER TABLE users ADD email STRING");
      TreeMap<Object, String> rows = byFirst(collect(env, "SELECT * FROM users"));
      assertEquals("+I[2, bob, 20, null]", rows.get(2L));
      await(
          env,
          "INSERT INTO users /*+ OPTIONS('sink.parallelism' = '2') */ VALUES"
              + " (4, 'di', 40000000000, 'di@example.com')");
      rows = byFirst(collect(env, "SELECT * FROM users"));
      assertEquals(4, rows.size());
      assertEquals("+I[4, di, 40000000000, di@example.com]", rows.get(4L));

      TableEnvironment streaming =
          session(CatalogSql.streaming(), "lake", warehouse, 4, s3.catalogOptions());
      await(
          streaming,
          "CREATE TEMPORARY VIEW probes AS SELECT id, PROCTIME() AS pt FROM (VALUES"
              + " (CAST(1 AS BIGINT)), (CAST(4 AS BIGINT)), (CAST(5 AS BIGINT))) AS v(id)");
      TreeMap<Object, String> joined =
          byFirst(
              collect(
                  streaming,
                  "SELECT p.id, u.name, u.email FROM probes AS p LEFT JOIN users FOR SYSTEM_TIME"
                      + " AS OF p.pt AS u ON p.id = u.id"));
      assertEquals("+I[1, ann, null]", joined.get(1L));
      assertEquals("+I[4, di, di@example.com]", joined.get(4L));
      assertEquals("+I[5, null, null]", joined.get(5L));

      List<Path> files;
      try (Stream<Path> walk = Files.walk(s3.blobs())) {
        files = walk.filter(Files::isRegularFile).collect(Collectors.toList());
      }
      assertTrue(
          files.stream().anyMatch(f -> f.toString().contains("/warehouse/flink/catalog/")),
          "catalog metadata on S3: " + files);
      assertTrue(
          files.stream().anyMatch(f -> f.toString().contains("/warehouse/flink/tables/")),
          "table files on S3");
      List<String> leaking = new ArrayList<>();
      for (Path file : files) {
        String content = readIfPresent(file);
        if (content.contains(S3Fixture.SECRET_KEY) || content.contains(S3Fixture.ACCESS_KEY)) {
          leaking.add(file.toString());
        }
      }
      assertFalse(files.isEmpty());
      assertTrue(leaking.isEmpty(), "credentials written to " + leaking);
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
