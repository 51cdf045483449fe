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

  private static final String DATAGEN =
      "CREATE TABLE gen (id BIGINT, v STRING) WITH ("
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
   * Inserts the generated rows into a Cobble sink table and checks what lands on disk: the inspect
   * schema and one shard per writer. The MiniCluster ITs open the shards and check every row; this
   * module has no Cobble classes on its class path.
   */
  static void assertSinkWrites(
      FlinkCluster cluster, SqlSession sql, String table, Path dir, int writers) throws Exception {
    StatementResult insert = sql.execute("INSERT INTO " + table + " SELECT id, v FROM gen");
    String job = insert.jobId().orElseThrow(() -> new AssertionError(insert.toString()));
    assertEquals("FINISHED", cluster.waitForJob(job, JOB_TIMEOUT));
    assertTrue(Files.isRegularFile(dir.resolve("schema").resolve("table-schema")), dir.toString());
    for (int shard = 0; shard < writers; shard++) {
      Path shardDir = dir.resolve("shard-" + shard);
      try (java.util.stream.Stream<Path> files = Files.list(shardDir)) {
        assertTrue(files.findAny().isPresent(), shardDir + " is empty");
      }
    }
  }

  /** (a) The matching dist jar in lib/: a job runs, the factory is found and validates. */
  @ParameterizedTest(name = "Flink {0}")
  @MethodSource("minors")
  void matchingDistJarInLib(String version) throws Exception {
    FlinkDistribution dist = distribution(version);
    Path data = workDir("data-" + version);
    try (FlinkCluster cluster =
        FlinkCluster.builder(dist, workDir("flink-" + version))
            .addLibJar(distJar(lineOf(version)))
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
   * (c) The recipe's setup on 1.19.3: the dist jar is not in lib/ but added to the session as a
   * user artifact, loaded child-first with {@code org.apache.flink.} removed from the parent-first
   * patterns.
   */
  @Test
  void childFirstUserArtifact() throws Exception {
    String version = "1.19.3";
    org.junit.jupiter.api.Assumptions.assumeTrue(isMinorSelected(version), "1.19.3 not selected");
    FlinkDistribution dist = distribution(version);
    List<String> patterns = dist.defaultParentFirstPatterns();
    assertTrue(patterns.contains("org.apache.flink."), "stock patterns: " + patterns);
    String childFirstPatterns =
        patterns.stream()
            .filter(p -> !p.equals("org.apache.flink."))
            .collect(Collectors.joining(";"));
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
                  cobbleSinkDdl(
                      "valid_sink",
                      workDir("data-child-first"),
                      ", 'bucket' = '4', 'sink.parallelism' = '1'"));
              // Not in lib/: without the artifact, Flink knows no 'cobble' factory.
              assertMentions(
                  expectError(sql, "INSERT INTO valid_sink SELECT id, v FROM gen"), "'cobble'");

              sql.execute("ADD JAR '" + distJar(lineOf(version)) + "'");
              assertSinkWrites(cluster, sql, "valid_sink", workDir("data-child-first"), 1);
              sql.execute(cobbleSinkDdl("no_bucket", workDir("data-child-first"), ""));
              assertMentions(
                  expectError(sql, "INSERT INTO no_bucket SELECT id, v FROM gen"), "bucket");
            }
          });
    }
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
