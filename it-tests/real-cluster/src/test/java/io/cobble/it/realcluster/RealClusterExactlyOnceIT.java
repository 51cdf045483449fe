package io.cobble.it.realcluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.cobble.Config;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.it.cluster.FlinkCluster;
import io.cobble.it.cluster.SqlSession;
import io.cobble.it.cluster.StatementResult;
import io.cobble.reader.Reader;
import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Exactly-once of the Cobble SQL sink on a real cluster: a checkpointed streaming INSERT runs, its
 * TaskManager is killed with SIGKILL after the sink has committed global snapshots, a new
 * TaskManager starts, the job recovers from its last checkpoint and finishes. The table keeps every
 * global snapshot, and each one readers could ever see must be the table after a prefix of the
 * generated ids (each key holds the last id of its residue class, so a snapshot that mixes two
 * prefixes or holds rows of a failed attempt shows a key that lags behind or runs ahead), taken for
 * a checkpoint the JobManager reports as completed; the last one holds exactly the upsert result.
 *
 * <p>The cluster runs the Cobble state backend (set in its configuration), and a {@link
 * StatefulSqlJob} shares the kill: it recovers from a Cobble checkpoint, then continues at another
 * parallelism from its retained checkpoint, so one TaskManager loss per minor proves both. On 2.x a
 * second one runs on Flink's asynchronous state API, served by Cobble's asynchronous backend. On
 * one minor per line the cluster's HA services are Cobble's HA wrapper ({@link HaWrapperCheck}).
 *
 * <p>The table is read with the engine's {@link Reader}; the rows are decoded by hand (BIGINT key:
 * 8 bytes big-endian; STRING column: a presence byte, then UTF-8), since this module keeps Flink
 * off its class path.
 */
class RealClusterExactlyOnceIT {

  private static final int ROWS = 10_000;
  private static final int KEYS = 500;
  private static final int BUCKETS = 4;
  private static final Duration TIMEOUT = Duration.ofMinutes(3);

  /** Key k ends with the value of the last generated id with {@code id % KEYS == k}. */
  private static Map<Long, String> expected() {
    return tableAfter(ROWS);
  }

  /** The table once ids 1..{@code prefix} are written. */
  private static Map<Long, String> tableAfter(long prefix) {
    Map<Long, String> rows = new TreeMap<>();
    for (long id = 1; id <= prefix; id++) {
      rows.put(id % KEYS, "v" + id);
    }
    return rows;
  }

  @ParameterizedTest(name = "Flink {0}")
  @MethodSource("io.cobble.it.realcluster.RealClusterIT#minors")
  void killedTaskManagerLosesAndDuplicatesNothing(String version) throws Exception {
    Path table = RealClusterIT.workDir("exactly-once-data-" + version).toAbsolutePath();
    // A table of an earlier run would satisfy the wait for commits before this job wrote any.
    RealClusterIT.deleteTree(table);
    Path stats = RealClusterIT.workDir("stateful-stats-" + version).toAbsolutePath();
    RealClusterIT.deleteTree(stats);
    // On 2.x a second stateful job runs the same SQL on Flink's asynchronous state API.
    boolean asyncLine = RealClusterIT.lineOf(version).startsWith("2.");
    Path asyncStats = RealClusterIT.workDir("async-stateful-stats-" + version).toAbsolutePath();
    RealClusterIT.deleteTree(asyncStats);
    Path checkpoints = RealClusterIT.workDir("checkpoints-" + version).toAbsolutePath();
    RealClusterIT.deleteTree(checkpoints);
    FlinkCluster.Builder builder =
        FlinkCluster.builder(
                RealClusterIT.distribution(version),
                RealClusterIT.workDir("flink-" + version + "-exactly-once"))
            .addLibJar(RealClusterIT.distJar(RealClusterIT.lineOf(version)))
            // 1 slot for this job, 2 for each stateful job; job B takes 3 after job A's 2.
            .config("taskmanager.numberOfTaskSlots", asyncLine ? "6" : "4")
            .config("heartbeat.interval", "1000")
            // A killed TaskManager is noticed within seconds through refused heartbeat RPCs
            // (heartbeat.rpc-failure-threshold); a long timeout only spares a live one that a
            // loaded machine slows down (5 s expired while the stateful job was deploying).
            .config("heartbeat.timeout", "30000")
            // The restarted writers remove the killed TaskManager's working directories at once.
            .config("cobble.sink.stale-dir-min-age", "1 s")
            // Every checkpoint's status stays queryable, to judge each published snapshot.
            .config("web.checkpoints.history", "10000")
            // The keyed state of every job is Cobble's, as a platform team configures it.
            .config("state.backend.type", StatefulSqlJob.BACKEND_FACTORY)
            .config(StatefulSqlJob.checkpointDirKey(version), checkpoints.toUri().toString())
            .config(
                "execution.checkpointing.externalized-checkpoint-retention",
                "RETAIN_ON_CANCELLATION");
    boolean haWrapper = HaWrapperCheck.runsOn(version);
    if (haWrapper) {
      HaWrapperCheck.configure(builder, version);
    }
    try (FlinkCluster cluster = builder.build()) {
      cluster.start();
      StatefulSqlJob stateful = new StatefulSqlJob(cluster, version, stats);
      StatefulSqlJob asyncStateful =
          asyncLine ? new StatefulSqlJob(cluster, version, asyncStats, true) : null;
      RealClusterIT.withLogsOnFailure(
          cluster,
          () -> {
            // The stateful job checkpoints before this test's job starts, so the kill below,
            // timed by this job's commits, also hits it with Cobble state to recover.
            stateful.start();
            if (asyncStateful != null) {
              asyncStateful.start();
              asyncStateful.awaitFirstCheckpoint();
            }
            stateful.awaitFirstCheckpoint();
            if (haWrapper) {
              HaWrapperCheck.assertSidecarsFollowCheckpoints(stateful, checkpoints);
            }
            Map<String, String> session = new HashMap<>();
            session.put("execution.runtime-mode", "streaming");
            session.put("execution.checkpointing.interval", "1s");
            session.put("parallelism.default", "1");
            session.put("restart-strategy.type", "fixed-delay");
            session.put("restart-strategy.fixed-delay.attempts", "20");
            session.put("restart-strategy.fixed-delay.delay", "2 s");
            try (SqlSession sql = cluster.openSqlSession(session)) {
              sql.execute(
                  "CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen',"
                      + " 'rows-per-second' = '500', 'fields.id.kind' = 'sequence',"
                      + " 'fields.id.start' = '1', 'fields.id.end' = '"
                      + ROWS
                      + "')");
              sql.execute(
                  RealClusterIT.cobbleSinkDdl(
                      "sink",
                      table,
                      ", 'bucket' = '"
                          + BUCKETS
                          + "', 'sink.parallelism' = '2', 'snapshot.retention' = '100000'"));
              StatementResult insert =
                  sql.execute(
                      "INSERT INTO sink SELECT CAST(MOD(id, "
                          + KEYS
                          + ") AS BIGINT), CONCAT('v', CAST(id AS STRING)) FROM gen");
              String job = insert.jobId().orElseThrow(() -> new AssertionError(insert.toString()));

              waitForCommits(table, 2);
              cluster.killTaskManager();
              assertEquals(137, cluster.taskManager().exitCode(), "SIGKILL exit code");
              cluster.waitForTaskManagerCount(0, Duration.ofSeconds(60));
              cluster.startTaskManager();

              assertEquals("FINISHED", cluster.waitForJob(job, TIMEOUT));
              assertTrue(
                  cluster
                          .restGet("/jobs/" + job + "/exceptions")
                          .path("exceptionHistory")
                          .path("entries")
                          .size()
                      > 0,
                  "the job never saw the TaskManager loss");
              assertEveryPublishedSnapshotIsAPrefix(cluster, job, table);
              // Job A's writers hold working directories until it ends too.
              // Both stateful jobs are cancelled before either restores, while their slow input
              // still runs however slow the machine.
              stateful.awaitRecovery();
              String retained = stateful.cancel();
              String asyncRetained = null;
              if (asyncStateful != null) {
                asyncStateful.awaitRecovery();
                asyncRetained = asyncStateful.cancel();
              }
              if (haWrapper) {
                HaWrapperCheck.assertReaderSeesTheSameWithoutSidecars(cluster, retained);
              }
              stateful.restoreAndCheck(retained);
              if (asyncStateful != null) {
                asyncStateful.restoreAndCheck(asyncRetained);
              }
              assertNoWriterDirectoryLeft(cluster);
            }
          });
    }
  }

  /**
   * Judges every global snapshot on the table: each but the last (the end of input's) belongs to a
   * checkpoint the JobManager completed and holds the table after a prefix of the ids, the newest
   * id it holds; the last holds all of them. Some snapshot was published before the kill and some
   * after the restart, so both sides of the failure are judged.
   */
  private static void assertEveryPublishedSnapshotIsAPrefix(
      FlinkCluster cluster, String job, Path table) throws Exception {
    Set<Long> completed = new TreeSet<>();
    for (JsonNode checkpoint : cluster.restGet("/jobs/" + job + "/checkpoints").path("history")) {
      if ("COMPLETED".equals(checkpoint.path("status").asText())) {
        completed.add(checkpoint.path("id").asLong());
      }
    }
    List<GlobalSnapshot> published = new ArrayList<>();
    try (Storage storage = StorageProviders.open(table.toUri(), StorageOptions.empty())) {
      SnapshotStore store = new SnapshotStore(storage);
      for (long id : store.globalIds()) {
        published.add(store.requireGlobal(id));
      }
    }
    assertTrue(published.size() >= 3, "global snapshots: " + published.size());
    GlobalSnapshot last = published.get(published.size() - 1);
    assertEquals(expected(), read(table, last.id()), "the end-of-input snapshot");
    long maxPrefix = 0;
    boolean midStream = false;
    for (GlobalSnapshot global : published.subList(0, published.size() - 1)) {
      assertTrue(
          completed.contains(global.checkpointId()),
          "global snapshot "
              + global.id()
              + " is of checkpoint "
              + global.checkpointId()
              + ", which the JobManager did not complete; completed: "
              + completed);
      Map<Long, String> rows = read(table, global.id());
      long prefix = 0;
      for (String value : rows.values()) {
        prefix = Math.max(prefix, Long.parseLong(value.substring(1)));
      }
      assertEquals(
          tableAfter(prefix),
          rows,
          "global snapshot " + global.id() + " of checkpoint " + global.checkpointId());
      assertTrue(prefix >= maxPrefix, "global snapshot " + global.id() + " went back in time");
      maxPrefix = prefix;
      midStream |= prefix < ROWS;
    }
    assertTrue(midStream, "no global snapshot was published mid-stream");
  }

  /**
   * The killed TaskManager's sink writers left their working directories in {@code io.tmp.dirs};
   * the restarted writers removed them (and said so in the log), and the finished job's writers
   * removed their own.
   */
  private static void assertNoWriterDirectoryLeft(FlinkCluster cluster) throws Exception {
    List<Path> left = new ArrayList<>();
    try (Stream<Path> io = Files.list(cluster.home().resolve("tmp"))) {
      for (Path dir : (Iterable<Path>) io.filter(Files::isDirectory)::iterator) {
        try (Stream<Path> writers = Files.list(dir)) {
          writers
              .filter(p -> p.getFileName().toString().startsWith("cobble-sink-"))
              .forEach(left::add);
        }
      }
    }
    assertEquals(List.of(), left, "Cobble sink working directories left behind");
    boolean logged = false;
    try (Stream<Path> logs = Files.list(cluster.logDir())) {
      for (Path log : (Iterable<Path>) logs.filter(Files::isRegularFile)::iterator) {
        String text = new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
        logged |= text.contains("Removed stale Cobble sink working directory");
      }
    }
    assertTrue(logged, "no writer reported removing the killed TaskManager's working directory");
  }

  /**
   * Waits until the sink has published global snapshot {@code id} (or a later one); with the 500
   * rows per second of the input, they come mid-stream however slow the machine.
   */
  private static void waitForCommits(Path table, long id) throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (Files.isDirectory(table)) {
        try (Storage storage = StorageProviders.open(table.toUri(), StorageOptions.empty())) {
          Optional<Long> current = new SnapshotStore(storage).currentGlobalId();
          if (current.isPresent() && current.get() >= id) {
            return;
          }
        }
      }
      Thread.sleep(100);
    }
    throw new AssertionError("the sink never committed global snapshot " + id + " at " + table);
  }

  private static Map<Long, String> read(Path table, long globalId) throws Exception {
    Map<Long, String> rows = new TreeMap<>();
    try (Storage storage = StorageProviders.open(table.toUri(), StorageOptions.empty());
        Reader reader =
            Reader.open(
                storage, globalId, Config.builder().set("total-buckets", BUCKETS).build())) {
      for (int bucket = 0; bucket < BUCKETS; bucket++) {
        try (ScanCursor cursor = reader.scan(bucket, "default", null, null, ScanOptions.DEFAULT)) {
          while (cursor.hasNext()) {
            Row row = cursor.next();
            long key = ByteBuffer.wrap(row.key()).getLong();
            byte[] value = row.columns()[0];
            assertEquals(1, value[0], "value of key " + key + " is NULL");
            String previous =
                rows.put(key, new String(value, 1, value.length - 1, StandardCharsets.UTF_8));
            assertEquals(null, previous, "key " + key + " stored twice");
          }
        }
      }
    }
    return rows;
  }
}
