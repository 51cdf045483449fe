package io.cobble.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.stream.Stream;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;

/**
 * The embedded quickstart, all in Flink SQL on a local MiniCluster: generated upserts written into
 * a Cobble table by the Cobble sink, the committed table read back with a batch scan, then used as
 * the dimension of a lookup join. Prints the results and where the table's files are. Then a
 * stateful DataStream job on the Cobble state backend ({@link StatefulQuickstart}).
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

    System.out.println("1. Sink: 100000 generated upserts over ids 1..10000 into " + table.toUri());
    long start = System.nanoTime();
    sql.executeSql("INSERT INTO user_scores SELECT id, name, score FROM scores_feed").await();
    System.out.printf("   committed in %d ms%n", (System.nanoTime() - start) / 1_000_000);

    System.out.println("2. Batch read of the committed table (one row per id):");
    sql.executeSql(
            "SELECT COUNT(*) AS user_rows, MIN(id) AS min_id, MAX(id) AS max_id,"
                + " MAX(score) AS best_score FROM user_scores")
        .print();

    System.out.println("3. Lookup join: orders enriched from the table (ids above 10000 miss):");
    sql.executeSql(
        "CREATE TABLE orders (order_id BIGINT, user_id BIGINT, amount INT, pt AS PROCTIME())"
            + " WITH ('connector' = 'datagen', 'number-of-rows' = '10',"
            + " 'fields.order_id.kind' = 'sequence', 'fields.order_id.start' = '1',"
            + " 'fields.order_id.end' = '10', 'fields.user_id.min' = '9000',"
            + " 'fields.user_id.max' = '11000', 'fields.amount.min' = '1',"
            + " 'fields.amount.max' = '500')");
    sql.executeSql(
            "SELECT o.order_id, o.user_id, o.amount, u.name, u.score FROM orders AS o"
                + " LEFT JOIN user_scores FOR SYSTEM_TIME AS OF o.pt AS u ON o.user_id = u.id")
        .print();

    System.out.println("4. The table's files under " + table + ":");
    printLayout(table);

    Path checkpoints = root.resolve("state-checkpoints");
    deleteRecursively(checkpoints);
    System.out.println(
        "5. State backend: a keyed window sum with event-time timers on Cobble state,"
            + " checkpoints into "
            + checkpoints.toUri()
            + ", one forced failure and the restore:");
    StatefulQuickstart.run(checkpoints);
  }

  /** One line per top-level directory of the table: what it holds and how many files. */
  private static void printLayout(Path table) throws IOException {
    try (Stream<Path> dirs = Files.list(table)) {
      for (Path dir : (Iterable<Path>) dirs.sorted()::iterator) {
        long files;
        try (Stream<Path> walk = Files.walk(dir)) {
          files = walk.filter(Files::isRegularFile).count();
        }
        System.out.printf("   %-11s %4d files  %s%n", dir.getFileName(), files, describe(dir));
      }
    }
  }

  private static String describe(Path dir) {
    switch (dir.getFileName().toString()) {
      case "schema":
        return "column names and types, read by the source";
      case "global":
        return "committed global snapshots; CURRENT names the newest";
      case "shards":
        return "one snapshot manifest per writer shard";
      case "data":
        return "SST and value-log files the snapshots reference";
      case "pins":
        return "shard snapshots writers still need";
      case "global-pins":
        return "global snapshots running readers still read (leases)";
      case "leases":
        return "files kept for shards that adopted them in place";
      default:
        return "";
    }
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
