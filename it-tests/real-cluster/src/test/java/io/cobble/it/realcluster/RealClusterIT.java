package io.cobble.it.realcluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.it.cluster.FlinkCluster;
import io.cobble.it.cluster.FlinkDistribution;
import io.cobble.it.cluster.SqlGatewayException;
import io.cobble.it.cluster.SqlSession;
import io.cobble.it.cluster.StatementResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Cobble dist jars on real standalone Flink clusters (JobManager, TaskManager and SQL Gateway
 * as separate JVMs), one cluster at a time.
 */
class RealClusterIT {

  private static final Duration JOB_TIMEOUT = Duration.ofMinutes(2);
  private static final String DIST_PREFIX =
      System.getProperty("cobble.it.distVersionPrefix", "0.1.0-1");

  static List<String> minors() {
    return Arrays.stream(
            System.getProperty(
                    "cobble.it.minors", "1.17.2,1.18.1,1.19.3,1.20.3,2.0.0,2.1.1,2.2.0,2.3.0")
                .split(","))
        .map(String::trim)
        .filter(s -> !s.isEmpty())
        .collect(Collectors.toList());
  }

  /** The Cobble line (dist jar) that serves a Flink minor. */
  static String lineOf(String flinkVersion) {
    String[] parts = flinkVersion.split("\\.");
    int major = Integer.parseInt(parts[0]);
    int minor = Integer.parseInt(parts[1]);
    if (major >= 2) {
      return "2.0";
    }
    return minor >= 19 ? "1.19" : "1.17";
  }

  static String distJarName(String line) {
    return "cobble-flink-dist-" + DIST_PREFIX + "-flink-" + line + ".jar";
  }

  static Path distJar(String line) {
    Path jar =
        Paths.get(System.getProperty("cobble.it.distDir", "target/dist"))
            .resolve(distJarName(line));
    assertTrue(Files.isRegularFile(jar), "missing " + jar);
    return jar;
  }

  static FlinkDistribution distribution(String version) {
    return FlinkDistribution.fromClusterLibs(
        Paths.get(System.getProperty("cobble.it.clusterLibs", "../cluster-libs")), version);
  }

  static Path workDir(String name) {
    return Paths.get(System.getProperty("cobble.it.workDir", "target/clusters")).resolve(name);
  }

  static boolean isMinorSelected(String version) {
    return minors().contains(version);
  }

  private static final java.util.regex.Pattern MISSING_PATH =
      java.util.regex.Pattern.compile("Missing required options are:\\s+path\\b");

  /** Ids 1..200, each with the value {@code v<id>}, so a read-back can check every value. */
  private static final String DATAGEN =
      "CREATE TABLE gen (id BIGINT, v AS CONCAT('v', CAST(id AS STRING))) WITH ("
          + "'connector' = 'datagen', 'number-of-rows' = '200', 'rows-per-second' = '100000',"
          + " 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '200')";

  static String cobbleSinkDdl(String table, Path dir, String options) {
    return "CREATE TABLE "
        + table
        + " (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'cobble'"
        + (dir == null ? "" : ", 'path' = '" + dir.toUri() + "'")
        + options
        + ")";
  }

  /** Runs {@code body}; on failure prints the cluster's log tails before rethrowing. */
  static void withLogsOnFailure(FlinkCluster cluster, ThrowingRunnable body) throws Exception {
    try {
      body.run();
    } catch (Exception | AssertionError e) {
      System.err.println(cluster.logTails(80));
      throw e;
    }
  }

  interface ThrowingRunnable {
    void run() throws Exception;
  }

  static SqlGatewayException expectError(SqlSession sql, String statement) {
    return assertThrows(
        SqlGatewayException.class, () -> sql.execute(statement), "should fail: " + statement);
  }

  static void assertMentions(SqlGatewayException e, String... texts) {
    for (String text : texts) {
      assertTrue(
          e.getMessage().contains(text),
          "error does not mention '" + text + "':\n" + e.getMessage());
    }
  }

  /**
   * Inserts the generated rows into a Cobble sink table and checks what the end of input commits:
   * the inspect schema, a global snapshot named by {@code global/CURRENT}, and one shard snapshot
   * directory per writer. {@link #assertSourceReadsBack} checks the rows themselves.
   */
  static void assertSinkWrites(
      FlinkCluster cluster, SqlSession sql, String table, Path dir, int writers) throws Exception {
    StatementResult insert = sql.execute("INSERT INTO " + table + " SELECT id, v FROM gen");
    String job = insert.jobId().orElseThrow(() -> new AssertionError(insert.toString()));
    assertEquals("FINISHED", cluster.waitForJob(job, JOB_TIMEOUT));
    assertTrue(Files.isRegularFile(dir.resolve("schema").resolve("table-schema")), dir.toString());
    assertTrue(Files.isRegularFile(dir.resolve("global").resolve("CURRENT")), dir + ": no commit");
    try (java.util.stream.Stream<Path> shards = Files.list(dir.resolve("shards"))) {
      assertEquals(writers, shards.count(), dir + ": one shard per writer");
    }
  }

  /**
   * Reads back the table {@link #assertSinkWrites} wrote (ids 1..200, two writers) through the
   * Cobble source: a batch scan; a streaming read, printed by the TaskManager, that follows the
   * global snapshot of a second insert and emits only its two changed rows; a lookup join with hits
   * and a miss. Leaves the session in streaming mode.
   */
  static void assertSourceReadsBack(FlinkCluster cluster, SqlSession sql, String sink, Path dir)
      throws Exception {
    sql.execute("SET 'execution.runtime-mode' = 'batch'");
    sql.execute(cobbleSinkDdl("read_back", dir, ", 'scan.mode' = 'batch'"));
    StatementResult scan = sql.execute("SELECT id, v FROM read_back");
    Map<Long, Object> scanned = new java.util.TreeMap<>();
    for (List<Object> row : scan.rows()) {
      assertEquals(
          null, scanned.put(((Number) row.get(0)).longValue(), row.get(1)), "scanned twice");
    }
    assertEquals(writtenRows(), scanned, "batch read-back");

    sql.execute("SET 'execution.runtime-mode' = 'streaming'");
    sql.execute(
        cobbleSinkDdl(
            "follow", dir, ", 'scan.mode' = 'streaming', 'scan.poll-interval-ms' = '200'"));
    // The TaskManager's stdout file outlives a run: this run's rows carry their own identifier.
    String identifier = "followed-" + Long.toHexString(System.nanoTime());
    sql.execute(
        "CREATE TABLE followed (id BIGINT, v STRING) WITH ('connector' = 'print',"
            + " 'print-identifier' = '"
            + identifier
            + "')");
    StatementResult follow = sql.execute("INSERT INTO followed SELECT id, v FROM follow");
    String followJob = follow.jobId().orElseThrow(() -> new AssertionError(follow.toString()));
    Path out = cluster.taskManager().outFile();
    waitForPrinted(
        out, identifier, lines -> lines.size() >= 200, "the 200 rows of the first snapshot");
    StatementResult update =
        sql.execute(
            "INSERT INTO "
                + sink
                + " VALUES (CAST(7 AS BIGINT), 'changed-7'), (CAST(201 AS BIGINT), 'new-201')");
    assertEquals(
        "FINISHED",
        cluster.waitForJob(
            update.jobId().orElseThrow(() -> new AssertionError(update.toString())), JOB_TIMEOUT));
    waitForPrinted(
        out,
        identifier,
        lines ->
            lines.stream().anyMatch(l -> l.contains("+I[7, changed-7]"))
                && lines.stream().anyMatch(l -> l.contains("+I[201, new-201]")),
        "the two changed rows of the second snapshot");
    assertEquals(202, printed(out, identifier).size(), "unchanged rows must not be emitted again");
    cancel(cluster, followJob);
    assertEquals("CANCELED", cluster.waitForJob(followJob, JOB_TIMEOUT));

    sql.execute(cobbleSinkDdl("dim", dir, ""));
    StatementResult joined =
        sql.execute(
            "SELECT p.id, d.v FROM (SELECT id, PROCTIME() AS pt FROM (VALUES (CAST(7 AS BIGINT)),"
                + " (CAST(150 AS BIGINT)), (CAST(999 AS BIGINT))) AS t(id)) AS p LEFT JOIN dim"
                + " FOR SYSTEM_TIME AS OF p.pt AS d ON p.id = d.id");
    Map<Long, Object> byId = new java.util.TreeMap<>();
    for (List<Object> row : joined.rows()) {
      byId.put(((Number) row.get(0)).longValue(), row.get(1));
    }
    assertEquals(List.of(7L, 150L, 999L), List.copyOf(byId.keySet()), joined.rows().toString());
    assertEquals("changed-7", byId.get(7L));
    assertEquals("v150", byId.get(150L), joined.rows().toString());
    assertEquals(null, byId.get(999L));
  }

  /**
   * The Cobble catalog through the gateway: CREATE CATALOG, a database and a table, INSERT, a scan,
   * a lookup join, ALTER TABLE (widen a column, append one), and a scan of the snapshot written
   * before the ALTERs through the new schema. Returns the session to the default catalog.
   */
  static void assertCatalogWorks(FlinkCluster cluster, SqlSession sql, Path warehouse)
      throws Exception {
    deleteTree(warehouse);
    sql.execute("SET 'execution.runtime-mode' = 'batch'");
    sql.execute(
        "CREATE CATALOG lake WITH ('type' = 'cobble', 'path' = '"
            + warehouse.toAbsolutePath().toUri()
            + "', 'buckets' = '4')");
    sql.execute("USE CATALOG lake");
    sql.execute("CREATE DATABASE analytics");
    sql.execute("USE analytics");
    sql.execute(
        "CREATE TABLE orders (id BIGINT NOT NULL, item STRING, qty INT,"
            + " PRIMARY KEY (id) NOT ENFORCED)");
    StatementResult insert =
        sql.execute(
            "INSERT INTO orders VALUES (CAST(1 AS BIGINT), 'apple', 3), (CAST(2 AS BIGINT),"
                + " 'pear', 5), (CAST(3 AS BIGINT), 'fig', 7)");
    assertEquals(
        "FINISHED",
        cluster.waitForJob(
            insert.jobId().orElseThrow(() -> new AssertionError(insert.toString())), JOB_TIMEOUT));
    StatementResult scan = sql.execute("SELECT COUNT(*) AS n, SUM(qty) AS total FROM orders");
    assertEquals(List.of(3L, 15L), longs(scan.rows().get(0)), scan.rows().toString());
    StatementResult joined =
        sql.execute(
            "SELECT p.id, o.item FROM (SELECT id, PROCTIME() AS pt FROM (VALUES (CAST(2 AS"
                + " BIGINT)), (CAST(9 AS BIGINT))) AS t(id)) AS p LEFT JOIN orders FOR"
                + " SYSTEM_TIME AS OF p.pt AS o ON p.id = o.id");
    Map<Long, Object> byId = new java.util.TreeMap<>();
    for (List<Object> row : joined.rows()) {
      byId.put(((Number) row.get(0)).longValue(), row.get(1));
    }
    assertEquals("pear", byId.get(2L), joined.rows().toString());
    assertTrue(byId.containsKey(9L) && byId.get(9L) == null, joined.rows().toString());
    sql.execute("ALTER TABLE orders MODIFY qty BIGINT");
    sql.execute("ALTER TABLE orders ADD note STRING");
    StatementResult altered = sql.execute("SELECT id, qty, note FROM orders WHERE id = 3");
    assertEquals(1, altered.rows().size(), altered.rows().toString());
    assertEquals(7L, ((Number) altered.rows().get(0).get(1)).longValue());
    assertEquals(null, altered.rows().get(0).get(2));
    sql.execute("USE CATALOG default_catalog");
    sql.execute("USE default_database");
  }

  private static List<Long> longs(List<Object> row) {
    return row.stream().map(v -> ((Number) v).longValue()).collect(Collectors.toList());
  }

  /** The rows a print sink with {@code identifier} wrote to the TaskManager's stdout. */
  private static List<String> printed(Path out, String identifier) throws java.io.IOException {
    try (java.util.stream.Stream<String> lines = Files.lines(out)) {
      return lines
          .filter(l -> l.startsWith(identifier) && l.contains("+I["))
          .collect(Collectors.toList());
    }
  }

  private static void waitForPrinted(
      Path out, String identifier, java.util.function.Predicate<List<String>> done, String what)
      throws Exception {
    long deadline = System.nanoTime() + JOB_TIMEOUT.toNanos();
    while (!done.test(printed(out, identifier))) {
      assertTrue(
          System.nanoTime() < deadline,
          "no "
              + what
              + " within "
              + JOB_TIMEOUT
              + "; printed: "
              + printed(out, identifier).size());
      Thread.sleep(200);
    }
  }

  /** Removes a directory tree left by an earlier run, so that every run starts a fresh table. */
  static void deleteTree(Path dir) throws java.io.IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (java.util.stream.Stream<Path> paths = Files.walk(dir)) {
      for (Path path :
          paths.sorted(java.util.Comparator.reverseOrder()).collect(Collectors.toList())) {
        Files.delete(path);
      }
    }
  }

  /** Cancels a running job through the JobManager's REST API. */
  static void cancel(FlinkCluster cluster, String jobId) throws Exception {
    java.net.http.HttpResponse<String> response =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create(cluster.restUrl() + "/jobs/" + jobId + "?mode=cancel"))
                    .method("PATCH", java.net.http.HttpRequest.BodyPublishers.noBody())
                    .timeout(Duration.ofSeconds(30))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(202, response.statusCode(), response.body());
  }

  /**
   * The filtered COUNT of issue 14 in streaming mode with checkpoints: a filter above an updating
   * aggregate makes Flink send UPDATE_BEFORE with no UPDATE_AFTER for a key whose count passes 2,
   * and the sink must remove it. Keys 0..49 are counted four times (enter the result, then leave
   * it), keys 50..59 twice and 60..69 once (stay): exactly the latter 20 rows remain.
   */
  static void assertFilteredCountRemovesRows(FlinkCluster cluster, SqlSession sql, Path dir)
      throws Exception {
    deleteTree(dir);
    sql.execute("SET 'execution.runtime-mode' = 'streaming'");
    sql.execute("SET 'execution.checkpointing.interval' = '500 ms'");
    sql.execute(
        "CREATE TABLE events (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '500',"
            + " 'number-of-rows' = '230', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',"
            + " 'fields.id.end' = '230')");
    sql.execute(
        "CREATE TABLE counts (k BIGINT, cnt BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ("
            + "'connector' = 'cobble', 'path' = '"
            + dir.toUri()
            + "', 'bucket' = '4', 'sink.parallelism' = '2')");
    StatementResult insert =
        sql.execute(
            "INSERT INTO counts SELECT k, cnt FROM (SELECT k, COUNT(*) AS cnt FROM (SELECT CASE"
                + " WHEN id <= 200 THEN MOD(id, 50) WHEN id <= 220 THEN 50 + (id - 201) / 2"
                + " ELSE 60 + (id - 221) END AS k FROM events) GROUP BY k) WHERE cnt < 3");
    String job = insert.jobId().orElseThrow(() -> new AssertionError(insert.toString()));
    assertEquals("FINISHED", cluster.waitForJob(job, JOB_TIMEOUT));
    sql.execute("SET 'execution.runtime-mode' = 'batch'");
    StatementResult rows = sql.execute("SELECT k, cnt FROM counts");
    Map<Long, Long> counts = new java.util.TreeMap<>();
    for (List<Object> row : rows.rows()) {
      counts.put(((Number) row.get(0)).longValue(), ((Number) row.get(1)).longValue());
    }
    Map<Long, Long> expected = new java.util.TreeMap<>();
    for (long k = 50; k < 70; k++) {
      expected.put(k, k < 60 ? 2L : 1L);
    }
    assertEquals(expected, counts, "rows left by the filtered count");
  }

  /**
   * (a) The matching dist jar in lib/: a job runs, the factory is found and validates, the sink
   * writes a table and the source reads it back (batch, streaming follow, lookup join).
   */
  @ParameterizedTest(name = "Flink {0}")
  @MethodSource("minors")
  void matchingDistJarInLib(String version) throws Exception {
    FlinkDistribution dist = distribution(version);
    Path data = workDir("data-" + version);
    deleteTree(data);
    try (FlinkCluster cluster =
        FlinkCluster.builder(dist, workDir("flink-" + version))
            .addLibJar(distJar(lineOf(version)))
            // A streaming read stays running while a second insert writes the table.
            .config("taskmanager.numberOfTaskSlots", "4")
            .build()) {
      cluster.start();
      withLogsOnFailure(
          cluster,
          () -> {
            assertTrue(cluster.hasSqlGateway(), "no SQL Gateway for " + version);
            try (SqlSession sql = cluster.openSqlSession()) {
              sql.execute(DATAGEN);
              sql.execute(
                  "CREATE TABLE hole (id BIGINT, v STRING) WITH ('connector' = 'blackhole')");
              StatementResult insert = sql.execute("INSERT INTO hole SELECT id, v FROM gen");
              String job = insert.jobId().orElseThrow(() -> new AssertionError(insert.toString()));
              assertEquals("FINISHED", cluster.waitForJob(job, JOB_TIMEOUT));

              sql.execute(
                  cobbleSinkDdl("no_path", null, ", 'bucket' = '4', 'sink.parallelism' = '1'"));
              SqlGatewayException noPath =
                  expectError(sql, "INSERT INTO no_path SELECT id, v FROM gen");
              assertTrue(
                  MISSING_PATH.matcher(noPath.getMessage()).find(),
                  "no 'Missing required options are: path' in:\n" + noPath.getMessage());

              sql.execute(
                  cobbleSinkDdl("valid_sink", data, ", 'bucket' = '4', 'sink.parallelism' = '2'"));
              assertSinkWrites(cluster, sql, "valid_sink", data, 2);
              assertSourceReadsBack(cluster, sql, "valid_sink", data);
              assertCatalogWorks(cluster, sql, workDir("catalog-" + version));

              assertFilteredCountRemovesRows(cluster, sql, workDir("counts-" + version));

              // Rows come back through the gateway (REST v2, JSON rows) on every minor.
              sql.execute("SET 'execution.runtime-mode' = 'batch'");
              StatementResult count = sql.execute("SELECT COUNT(*) AS n FROM gen");
              assertEquals(List.of("n"), count.columns());
              assertEquals(List.of(List.of(200)), count.rows(), count.rowKinds().toString());
            }
          });
    }
  }

  /** (b) The 1.17 dist jar in a 2.x cluster's lib/: the line guard names the 2.0 jar. */
  @Test
  void wrongLineJarIsRejectedByTheGuard() throws Exception {
    String version = "2.0.0";
    org.junit.jupiter.api.Assumptions.assumeTrue(isMinorSelected(version), "2.0.0 not selected");
    try (FlinkCluster cluster =
        FlinkCluster.builder(distribution(version), workDir("flink-" + version + "-wrong-jar"))
            .addLibJar(distJar("1.17"))
            .build()) {
      cluster.start();
      withLogsOnFailure(
          cluster,
          () -> {
            try (SqlSession sql = cluster.openSqlSession()) {
              sql.execute(DATAGEN);
              sql.execute(
                  cobbleSinkDdl(
                      "valid_sink",
                      workDir("data-wrong-jar"),
                      ", 'bucket' = '4', 'sink.parallelism' = '1'"));
              assertMentions(
                  expectError(sql, "INSERT INTO valid_sink SELECT id, v FROM gen"),
                  "This Cobble jar (" + distJarName("1.17") + ") serves Flink 1.17 and 1.18",
                  "the running Flink is " + version,
                  "Use " + distJarName("2.0") + " instead.");
            }
          });
    }
  }

  /**
   * (c) The job-side artifacts on 1.19.3, nothing of Cobble in lib/: a job jar bundling {@code
   * cobble-flink-sink} and {@code cobble-flink-source} (service files merged, as a shaded job jar
   * has them) is added to the session as a user artifact and loaded child-first, with {@code
   * org.apache.flink.} removed from the parent-first patterns. The sink writes the table, the
   * source reads every row back and serves a lookup join, and the factory still validates.
   */
  @Test
  void childFirstJobJarWithTheJobSideArtifacts() throws Exception {
    String version = "1.19.3";
    org.junit.jupiter.api.Assumptions.assumeTrue(isMinorSelected(version), "1.19.3 not selected");
    FlinkDistribution dist = distribution(version);
    List<String> patterns = dist.defaultParentFirstPatterns();
    assertTrue(patterns.contains("org.apache.flink."), "stock patterns: " + patterns);
    String childFirstPatterns =
        patterns.stream()
            .filter(p -> !p.equals("org.apache.flink."))
            .collect(Collectors.joining(";"));
    Path jobJar =
        ServicesMergingBundle.write(
            workDir("child-first-job").resolve("cobble-job.jar"),
            List.of(
                jobSideJar("cobble-flink-sink", version),
                jobSideJar("cobble-flink-source", version)));
    Path data = workDir("data-child-first");
    deleteTree(data);
    try (FlinkCluster cluster =
        FlinkCluster.builder(dist, workDir("flink-" + version + "-child-first"))
            .config("classloader.resolve-order", "child-first")
            .config("classloader.parent-first-patterns.default", childFirstPatterns)
            .build()) {
      cluster.start();
      withLogsOnFailure(
          cluster,
          () -> {
            try (SqlSession sql = cluster.openSqlSession(Map.of())) {
              sql.execute(DATAGEN);
              sql.execute(
                  cobbleSinkDdl("valid_sink", data, ", 'bucket' = '4', 'sink.parallelism' = '1'"));
              // Not in lib/: without the job jar, Flink knows no 'cobble' factory.
              assertMentions(
                  expectError(sql, "INSERT INTO valid_sink SELECT id, v FROM gen"), "'cobble'");

              sql.execute("ADD JAR '" + jobJar + "'");
              assertSinkWrites(cluster, sql, "valid_sink", data, 1);
              sql.execute("SET 'execution.runtime-mode' = 'batch'");
              sql.execute(cobbleSinkDdl("read_back", data, ""));
              StatementResult scan = sql.execute("SELECT id, v FROM read_back");
              Map<Long, Object> scanned = new java.util.TreeMap<>();
              for (List<Object> row : scan.rows()) {
                scanned.put(((Number) row.get(0)).longValue(), row.get(1));
              }
              assertEquals(writtenRows(), scanned, "batch read-back");
              sql.execute("SET 'execution.runtime-mode' = 'streaming'");
              StatementResult joined =
                  sql.execute(
                      "SELECT p.id, d.v FROM (SELECT id, PROCTIME() AS pt FROM (VALUES"
                          + " (CAST(42 AS BIGINT)), (CAST(999 AS BIGINT))) AS t(id)) AS p"
                          + " LEFT JOIN read_back FOR SYSTEM_TIME AS OF p.pt AS d ON p.id = d.id");
              Map<Long, Object> byId = new java.util.TreeMap<>();
              for (List<Object> row : joined.rows()) {
                byId.put(((Number) row.get(0)).longValue(), row.get(1));
              }
              Map<Long, Object> expectedJoin = new java.util.TreeMap<>();
              expectedJoin.put(42L, "v42");
              expectedJoin.put(999L, null);
              assertEquals(expectedJoin, byId, joined.rows().toString());

              sql.execute(cobbleSinkDdl("no_bucket", data, ""));
              assertMentions(
                  expectError(sql, "INSERT INTO no_bucket SELECT id, v FROM gen"), "bucket");
            }
          });
    }
  }

  /** A job-side artifact ({@code cobble-flink-sink} or {@code -source}) of the minor's line. */
  static Path jobSideJar(String artifact, String flinkVersion) {
    Path jar =
        Paths.get(System.getProperty("cobble.it.distDir", "target/dist"))
            .resolve(artifact + "-" + DIST_PREFIX + "-flink-" + lineOf(flinkVersion) + ".jar");
    assertTrue(Files.isRegularFile(jar), "missing " + jar);
    return jar;
  }

  /** What {@link #DATAGEN} generates: ids 1..200 with the value {@code v<id>}. */
  private static Map<Long, Object> writtenRows() {
    Map<Long, Object> rows = new java.util.TreeMap<>();
    for (long id = 1; id <= 200; id++) {
      rows.put(id, "v" + id);
    }
    return rows;
  }

  /** The harness can SIGKILL the TaskManager and start a new one that runs jobs. */
  @Test
  void taskManagerKillAndRestart() throws Exception {
    List<String> selected = minors();
    String version = selected.get(selected.size() - 1);
    try (FlinkCluster cluster =
        FlinkCluster.builder(distribution(version), workDir("flink-" + version + "-tm-restart"))
            .addLibJar(distJar(lineOf(version)))
            .config("heartbeat.interval", "1000")
            .config("heartbeat.timeout", "5000")
            .build()) {
      cluster.start();
      withLogsOnFailure(
          cluster,
          () -> {
            java.util.Set<String> before = cluster.taskManagerIds();
            assertEquals(1, before.size(), "TaskManagers: " + before);
            cluster.killTaskManager();
            assertTrue(!cluster.taskManager().isAlive());
            assertEquals(137, cluster.taskManager().exitCode(), "SIGKILL exit code");
            cluster.waitForTaskManagerCount(0, Duration.ofSeconds(60));

            cluster.startTaskManager();
            java.util.Set<String> after = cluster.taskManagerIds();
            assertEquals(1, after.size(), "TaskManagers: " + after);
            assertTrue(!after.equals(before), "a new TaskManager is expected: " + after);
            try (SqlSession sql = cluster.openSqlSession()) {
              sql.execute(DATAGEN);
              sql.execute(
                  "CREATE TABLE hole (id BIGINT, v STRING) WITH ('connector' = 'blackhole')");
              StatementResult insert = sql.execute("INSERT INTO hole SELECT id, v FROM gen");
              assertEquals(
                  "FINISHED", cluster.waitForJob(insert.jobId().orElseThrow(), JOB_TIMEOUT));
              // A bounded query's rows come back through the gateway too.
              StatementResult rows = sql.execute("SELECT COUNT(*) AS n FROM gen");
              assertEquals(List.of("n"), rows.columns());
              Object last = rows.rows().get(rows.rows().size() - 1).get(0);
              assertEquals(200L, ((Number) last).longValue(), "rows: " + rows.rows());
            }
          });
    }
  }
}
