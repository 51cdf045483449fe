package io.cobble.it.realcluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.cobble.it.cluster.FlinkCluster;
import io.cobble.it.cluster.SqlSession;
import io.cobble.it.cluster.StatementResult;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A stateful SQL job on the Cobble state backend of a real cluster: a regular join of orders with
 * customers feeding a grouped aggregation, written into a Cobble sink table. It runs as job A at
 * parallelism 2 next to another job whose test kills the TaskManager, recovers from its own
 * checkpoint, is cancelled once it has checkpointed again, and continues as job B at parallelism 3
 * from A's retained checkpoint (CLAIM). B ends with the end of input; the table must then hold
 * exactly the aggregate of every order, each value checked.
 *
 * <p>The orders come slowly in A (so it is still running when it is cancelled, however slow the
 * machine) and fast in B: the rate is a table option only, not part of the checkpointed state.
 */
final class StatefulSqlJob {

  static final String BACKEND_FACTORY = "io.cobble.flink.state.CobbleStateBackendFactory";

  private static final long ORDERS = 40_000;
  private static final int CUSTOMERS = 50;
  private static final int REGIONS = 7;
  // Job A gets 400 s of input: on a machine with a load of 45 on 2 cores it was cancelled after
  // 170 s.
  private static final int SLOW_RATE = 100;
  private static final Duration TIMEOUT = Duration.ofMinutes(3);

  private final FlinkCluster cluster;
  private final String version;
  private final Path table;
  private final boolean asyncState;
  private String jobA;
  private long retainedId = -1;

  /** The job on Flink's synchronous state API; it rescales from 2 to 3 on restore. */
  StatefulSqlJob(FlinkCluster cluster, String version, Path table) {
    this(cluster, version, table, false);
  }

  /**
   * With {@code asyncState} the SQL operators run on Flink 2.x's asynchronous state API ({@code
   * table.exec.async-state.enabled}), served by Cobble's asynchronous backend; job B then keeps
   * parallelism 2.
   */
  StatefulSqlJob(FlinkCluster cluster, String version, Path table, boolean asyncState) {
    this.cluster = cluster;
    this.version = version;
    this.table = table;
    this.asyncState = asyncState;
  }

  /** The cluster configuration key of the checkpoint directory on {@code version}. */
  static String checkpointDirKey(String version) {
    return renamedIn120(version) ? "execution.checkpointing.dir" : "state.checkpoints.dir";
  }

  private static boolean renamedIn120(String version) {
    String[] parts = version.split("\\.");
    int major = Integer.parseInt(parts[0]);
    return major >= 2 || Integer.parseInt(parts[1]) >= 20;
  }

  /** Submits job A (parallelism 2, a checkpoint a second, slow orders). */
  void start() throws Exception {
    try (SqlSession sql = cluster.openSqlSession(session(2))) {
      createTables(sql, SLOW_RATE);
      jobA = insert(sql);
    }
  }

  /**
   * Waits until job A has completed a checkpoint, so that the coming TaskManager loss is recovered
   * from Cobble state rather than from the start.
   */
  void awaitFirstCheckpoint() throws Exception {
    awaitCheckpoints(
        "job A's first completed checkpoint",
        checkpoints -> checkpoints.path("counts").path("completed").asLong() > 0);
    JsonNode config = cluster.restGet("/jobs/" + jobA + "/checkpoints/config");
    assertTrue(
        config.path("state_backend").asText().contains("Cobble"),
        "job A does not run on the Cobble state backend: " + config);
  }

  /**
   * After the TaskManager loss: waits until job A restored a checkpoint and completed a newer one
   * (and, on asynchronous state, until Cobble's asynchronous backend shows that it serves it).
   */
  void awaitRecovery() throws Exception {
    awaitCheckpoints(
        "job A to restore a checkpoint after the TaskManager loss and complete a newer one",
        checkpoints -> {
          JsonNode restored = checkpoints.path("latest").path("restored");
          JsonNode completed = checkpoints.path("latest").path("completed");
          return restored.isObject()
              && completed.isObject()
              && completed.path("id").asLong() > restored.path("id").asLong();
        });
    if (asyncState) {
      awaitAsyncStateThreads();
    }
  }

  /** Job A's id (the name of its directory under the checkpoint directory). */
  String jobA() {
    return jobA;
  }

  /** Waits until job A has completed a checkpoint with an id of at least {@code id}. */
  void awaitCompletedCheckpoint(long id) throws Exception {
    awaitCheckpoints(
        "job A's checkpoint " + id,
        checkpoints -> checkpoints.path("latest").path("completed").path("id").asLong() >= id);
  }

  /** Cancels job A and returns the location of the checkpoint it retained. */
  String cancel() throws Exception {
    RealClusterIT.cancel(cluster, jobA);
    assertEquals("CANCELED", cluster.waitForJob(jobA, TIMEOUT), "job A ended before its cancel");
    JsonNode latest =
        cluster.restGet("/jobs/" + jobA + "/checkpoints").path("latest").path("completed");
    String retained = latest.path("external_path").asText("");
    assertTrue(!retained.isEmpty(), "job A retained no checkpoint: " + latest);
    retainedId = latest.path("id").asLong();
    return retained;
  }

  /**
   * Restores job A's retained checkpoint into job B in CLAIM mode, at parallelism 3 (2 on
   * asynchronous state), waits for B to finish, and checks every row of the table.
   */
  void restoreAndCheck(String retained) throws Exception {
    Map<String, String> restore = session(asyncState ? 2 : 3);
    restore.put(
        renamedIn120(version) ? "execution.state-recovery.path" : "execution.savepoint.path",
        retained);
    restore.put(
        renamedIn120(version)
            ? "execution.state-recovery.claim-mode"
            : "execution.savepoint-restore-mode",
        "CLAIM");
    try (SqlSession sql = cluster.openSqlSession(restore)) {
      createTables(sql, 100_000);
      String jobB = insert(sql);
      assertEquals("FINISHED", cluster.waitForJob(jobB, TIMEOUT));
      // The checkpoint statistics name only the latest restore, which is job B's own checkpoint
      // if B failed over; the JobManager logs the start from the retained checkpoint once.
      List<String> starts = cluster.logLinesContaining("Starting job " + jobB + " from savepoint ");
      assertTrue(!starts.isEmpty(), "the JobManager log has no start of job B from a checkpoint");
      for (String start : starts) {
        assertTrue(
            start.contains(retained),
            "job B did not start from job A's retained checkpoint " + retained + ": " + start);
      }
      JsonNode restored =
          cluster.restGet("/jobs/" + jobB + "/checkpoints").path("latest").path("restored");
      if (restored.path("id").asLong(-1) != retainedId) {
        System.err.println(
            "job B failed over after its checkpoint "
                + restored.path("id")
                + "; its exceptions: "
                + cluster.restGet("/jobs/" + jobB + "/exceptions"));
      }
    }
    assertEquals(expected(), read(), "the aggregate of every order after the restore");
  }

  private Map<String, String> session(int parallelism) {
    Map<String, String> session = new HashMap<>();
    session.put("execution.runtime-mode", "streaming");
    session.put("execution.checkpointing.interval", "1s");
    session.put("parallelism.default", String.valueOf(parallelism));
    session.put("restart-strategy.type", "fixed-delay");
    session.put("restart-strategy.fixed-delay.attempts", "20");
    session.put("restart-strategy.fixed-delay.delay", "2 s");
    if (asyncState) {
      session.put("table.exec.async-state.enabled", "true");
    }
    return session;
  }

  private void createTables(SqlSession sql, int ordersPerSecond) {
    sql.execute(
        "CREATE TABLE orders (id BIGINT, cust AS CAST(MOD(id, "
            + CUSTOMERS
            + ") AS BIGINT), amount AS id * 3) WITH ('connector' = 'datagen',"
            + " 'rows-per-second' = '"
            + ordersPerSecond
            + "', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',"
            + " 'fields.id.end' = '"
            + ORDERS
            + "')");
    sql.execute(
        "CREATE TABLE customers (cid BIGINT, region AS CONCAT('r', CAST(MOD(cid, "
            + REGIONS
            + ") AS STRING))) WITH ('connector' = 'datagen', 'fields.cid.kind' = 'sequence',"
            + " 'fields.cid.start' = '0', 'fields.cid.end' = '"
            + (CUSTOMERS - 1)
            + "')");
    sql.execute(
        "CREATE TABLE stats (cust BIGINT, region STRING, cnt BIGINT, total BIGINT,"
            + " PRIMARY KEY (cust) NOT ENFORCED) WITH ('connector' = 'cobble', 'path' = '"
            + table.toUri()
            + "', 'bucket' = '4', 'sink.parallelism' = '2')");
  }

  private static String insert(SqlSession sql) {
    StatementResult insert =
        sql.execute(
            "INSERT INTO stats SELECT o.cust, MAX(c.region), COUNT(*), SUM(o.amount)"
                + " FROM orders AS o JOIN customers AS c ON o.cust = c.cid GROUP BY o.cust");
    return insert.jobId().orElseThrow(() -> new AssertionError(insert.toString()));
  }

  /** Per customer: its region, how many orders and the sum of their amounts. */
  private static Map<Long, List<Object>> expected() {
    Map<Long, List<Object>> rows = new TreeMap<>();
    for (long id = 1; id <= ORDERS; id++) {
      long cust = id % CUSTOMERS;
      List<Object> previous = rows.get(cust);
      long cnt = previous == null ? 0 : (Long) previous.get(1);
      long total = previous == null ? 0 : (Long) previous.get(2);
      rows.put(cust, List.of("r" + (cust % REGIONS), cnt + 1, total + id * 3));
    }
    return rows;
  }

  private Map<Long, List<Object>> read() {
    Map<String, String> batch = new HashMap<>();
    batch.put("execution.runtime-mode", "batch");
    batch.put("parallelism.default", "1");
    Map<Long, List<Object>> rows = new TreeMap<>();
    try (SqlSession sql = cluster.openSqlSession(batch)) {
      sql.execute(
          "CREATE TABLE stats_read (cust BIGINT, region STRING, cnt BIGINT, total BIGINT,"
              + " PRIMARY KEY (cust) NOT ENFORCED) WITH ('connector' = 'cobble', 'path' = '"
              + table.toUri()
              + "', 'scan.mode' = 'batch')");
      StatementResult scan = sql.execute("SELECT cust, region, cnt, total FROM stats_read");
      for (List<Object> row : scan.rows()) {
        List<Object> previous =
            rows.put(
                ((Number) row.get(0)).longValue(),
                List.of(
                    row.get(1),
                    ((Number) row.get(2)).longValue(),
                    ((Number) row.get(3)).longValue()));
        assertEquals(null, previous, "customer " + row.get(0) + " read twice");
      }
    }
    return rows;
  }

  /**
   * Waits until a TaskManager's thread dump shows the executor threads of Cobble's asynchronous
   * backend: Flink's adaptor that runs the synchronous backend under the asynchronous API never
   * starts them, so they prove which path served job A after its recovery.
   */
  private void awaitAsyncStateThreads() throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    List<String> names = new java.util.ArrayList<>();
    while (true) {
      names.clear();
      for (String tm : cluster.taskManagerIds()) {
        for (JsonNode thread :
            cluster.restGet("/taskmanagers/" + tm + "/thread-dump").path("threadInfos")) {
          String name = thread.path("threadName").asText();
          names.add(name);
          if (name.startsWith("cobble-async-apply-") || name.startsWith("cobble-async-read-")) {
            return;
          }
        }
      }
      assertTrue(
          System.nanoTime() < deadline,
          "no thread of Cobble's asynchronous state backend on any TaskManager within "
              + TIMEOUT
              + "; threads: "
              + names);
      Thread.sleep(500);
    }
  }

  private void awaitCheckpoints(String what, java.util.function.Predicate<JsonNode> done)
      throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (true) {
      JsonNode checkpoints = cluster.restGet("/jobs/" + jobA + "/checkpoints");
      if (done.test(checkpoints)) {
        return;
      }
      String state = cluster.jobState(jobA);
      assertTrue(
          !List.of("FINISHED", "FAILED", "CANCELED").contains(state),
          "job A is " + state + " while waiting for " + what);
      assertTrue(
          System.nanoTime() < deadline,
          "no " + what + " within " + TIMEOUT + "; checkpoints: " + checkpoints.path("latest"));
      Thread.sleep(200);
    }
  }
}
