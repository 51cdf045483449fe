package io.cobble.examples;

import io.cobble.Config;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.reader.Reader;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/**
 * The embedded quickstart: generated rows upserted into a Cobble table by the Cobble SQL sink on a
 * local MiniCluster, then read back from the table's files. Reading through SQL (batch scans and
 * lookup joins) arrives with the Cobble source.
 */
public final class Quickstart {

  private static final int BUCKETS = 8;
  private static final int WRITERS = 2;

  private Quickstart() {}

  public static void main(String[] args) throws Exception {
    Path root = Paths.get(args.length > 0 ? args[0] : "cobble-quickstart").toAbsolutePath();
    Path table = root.resolve("user_scores");
    deleteRecursively(table);

    TableEnvironment sql = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    sql.executeSql(
        "CREATE TABLE scores_feed (id BIGINT, name STRING, score INT) WITH ("
            + " 'connector' = 'datagen', 'number-of-rows' = '100000',"
            + " 'fields.id.min' = '1', 'fields.id.max' = '10000',"
            + " 'fields.name.length' = '8', 'fields.score.min' = '0', 'fields.score.max' = '100')");
    sql.executeSql(
        "CREATE TABLE user_scores (id BIGINT, name STRING, score INT,"
            + " PRIMARY KEY (id) NOT ENFORCED) WITH ("
            + " 'connector' = 'cobble', 'path' = '"
            + table.toUri()
            + "', 'bucket' = '"
            + BUCKETS
            + "', 'sink.parallelism' = '"
            + WRITERS
            + "')");
    System.out.println("Writing 100000 generated upserts over 10000 ids into " + table.toUri());
    long start = System.nanoTime();
    sql.executeSql("INSERT INTO user_scores SELECT id, name, score FROM scores_feed").await();
    System.out.printf("Sink job finished in %d ms%n", (System.nanoTime() - start) / 1_000_000);

    List<RowData> rows = readBack(table);
    System.out.println("Rows in the table (one per id): " + rows.size());
    rows.stream().limit(5).forEach(row -> System.out.println("  " + row));
    try (Stream<Path> files = Files.walk(table)) {
      files.filter(Files::isRegularFile).forEach(f -> System.out.println("  file " + f));
    }
    System.out.println(
        "Batch reads and lookup joins through SQL arrive with the Cobble source; the table above"
            + " is what they will read.");
  }

  /**
   * Reads the table's current global snapshot (what the last completed checkpoint or the end of
   * input committed) with the engine's reader and decodes its rows with the table's schema.
   */
  private static List<RowData> readBack(Path table) throws IOException {
    List<RowData> rows = new ArrayList<>();
    try (Storage storage = StorageProviders.open(table.toUri(), StorageOptions.empty())) {
      TableSchemaFile schema =
          TableSchemaFile.read(storage)
              .orElseThrow(() -> new IllegalStateException("no table schema under " + table));
      RowType rowType =
          RowType.of(
              schema.columnTypes().toArray(new LogicalType[0]),
              schema.columnNames().toArray(new String[0]));
      int[] keyPositions =
          schema.primaryKey().stream().mapToInt(schema.columnNames()::indexOf).toArray();
      RowCodec codec = new RowCodec(rowType, keyPositions);
      Config config = Config.builder().set("total-buckets", schema.bucketCount()).build();
      try (Reader reader = Reader.open(storage, config)) {
        for (int bucket = 0; bucket < schema.bucketCount(); bucket++) {
          try (ScanCursor cursor =
              reader.scan(bucket, TableLayout.FAMILY, null, null, ScanOptions.DEFAULT)) {
            while (cursor.hasNext()) {
              Row stored = cursor.next();
              rows.add(codec.decode(stored.key(), stored.columns()));
            }
          }
        }
      }
    }
    return rows;
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) paths.sorted((a, b) -> b.compareTo(a))::iterator) {
        Files.delete(p);
      }
    }
  }
}
