package io.cobble.it.minicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.S3ProxyServer;
import io.cobble.testing.flink.LoopbackMiniCluster;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Cobble SQL sink and source on object storage, with this line's dist jar on its MiniCluster: a
 * real S3Proxy (authentication on, 127.0.0.1) and {@code s3://} tables configured only through
 * {@code storage.option.*}. A checkpointed streaming INSERT writes batches of rows; a {@code
 * scan.mode = 'streaming'} source follows the table while it is written, batch reads and a lookup
 * join read it, and batch reads running concurrently with the streaming write only ever see whole
 * global snapshots.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CobbleOnObjectStorageIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  private static final int ROWS_PER_BATCH = 20;

  @TempDir static Path blobs;

  private static S3ProxyServer s3;

  @BeforeAll
  static void startS3() throws Exception {
    s3 = S3ProxyServer.start(blobs, "tables");
  }

  @AfterAll
  static void stopS3() throws Exception {
    s3.close();
  }

  @BeforeEach
  void resetGates() {
    Batches.RELEASED.set(false);
    Batches.READS.set(0);
  }

  // ------------------------------------------------------------------ the streaming write

  /**
   * Turns ticks into batches of rows, one whole batch per call, so that every checkpoint holds
   * whole batches. Batch {@code k} is {@link #ROWS_PER_BATCH} rows; in append mode ids {@code
   * k*R..k*R+R-1} named {@code b<k>}, in rewrite mode ids {@code 0..R-1} all named {@code v<k>}.
   * Gates: batches from {@code holdAt} on wait for {@link #RELEASED}; with {@code batchesPerRead}
   * set, batch {@code k} waits until concurrent reads have seen {@code k / batchesPerRead}
   * different versions.
   */
  static final class Batches extends RichFlatMapFunction<Long, Row> {
    static final AtomicBoolean RELEASED = new AtomicBoolean();

    /** Different versions the concurrent reads have seen so far. */
    static final AtomicInteger READS = new AtomicInteger();

    private final int batches;
    private final boolean rewrite;
    private final int holdAt;
    private final int batchesPerRead;
    private int next;

    Batches(int batches, boolean rewrite, int holdAt, int batchesPerRead) {
      this.batches = batches;
      this.rewrite = rewrite;
      this.holdAt = holdAt;
      this.batchesPerRead = batchesPerRead;
    }

    @Override
    public void flatMap(Long tick, Collector<Row> out) throws Exception {
      Thread.sleep(40);
      if (next >= batches
          || (next >= holdAt && !RELEASED.get())
          || (batchesPerRead > 0 && READS.get() < next / batchesPerRead)) {
        return;
      }
      for (int i = 0; i < ROWS_PER_BATCH; i++) {
        long id = rewrite ? i : (long) next * ROWS_PER_BATCH + i;
        out.collect(Row.of(id, (rewrite ? "v" : "b") + next));
      }
      next++;
    }
  }

  /** Starts a checkpointed streaming INSERT of {@code batches} into the table at {@code table}. */
  private JobClient startWrite(URI table, Batches batches, String sinkOptions) {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    env.enableCheckpointing(100);
    StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
    tEnv.createTemporaryView(
        "batches",
        env.fromSequence(0, Long.MAX_VALUE)
            .setParallelism(1)
            .flatMap(batches)
            .returns(Types.ROW_NAMED(new String[] {"id", "name"}, Types.LONG, Types.STRING))
            .setParallelism(1));
    tEnv.executeSql(
        "CREATE TABLE sink (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH"
            + " ('connector' = 'cobble', 'path' = '"
            + table
            + "', 'bucket' = '4', 'sink.parallelism' = '2', 'sink.writer-buffer-memory' = '1mb'"
            + sinkOptions
            + s3.ddlOptions()
            + ")");
    TableResult insert = tEnv.executeSql("INSERT INTO sink SELECT id, name FROM batches");
    return insert.getJobClient().orElseThrow(() -> new AssertionError("no job for the INSERT"));
  }

  /** Waits until the sink has published a global snapshot of {@code table}. */
  private static void waitForFirstCommit(URI table) throws Exception {
    long deadline = System.nanoTime() + 120_000_000_000L;
    try (Storage storage = StorageProviders.open(table, StorageOptions.of(s3.clientOptions()))) {
      SnapshotStore store = new SnapshotStore(storage);
      while (!store.currentGlobalId().isPresent()) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("no global snapshot of " + table + " within 120 s");
        }
        Thread.sleep(50);
      }
    }
  }

  private static String sourceDdl(String name, URI table, String options) {
    return "CREATE TABLE "
        + name
        + " (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'cobble',"
        + " 'source.kind' = 'sink', 'path' = '"
        + table
        + "'"
        + options
        + s3.ddlOptions()
        + ")";
  }

  private static TreeMap<Long, String> take(CloseableIterator<Row> rows, int count) {
    TreeMap<Long, String> taken = new TreeMap<>();
    for (int i = 0; i < count; i++) {
      Row row = rows.next();
      String previous = taken.put((Long) row.getField(0), (String) row.getField(1));
      assertEquals(null, previous, "row " + row + " emitted twice");
    }
    return taken;
  }

  private static TreeMap<Long, String> collect(TableEnvironment env, String query)
      throws Exception {
    List<Row> rows = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql(query).collect()) {
      it.forEachRemaining(rows::add);
    }
    TreeMap<Long, String> byId = new TreeMap<>();
    for (Row row : rows) {
      assertEquals(null, byId.put((Long) row.getField(0), (String) row.getField(1)), "twice");
    }
    return byId;
  }

  /** The rows of append batches {@code [from, to)}. */
  private static TreeMap<Long, String> appended(int from, int to) {
    TreeMap<Long, String> rows = new TreeMap<>();
    for (int batch = from; batch < to; batch++) {
      for (int i = 0; i < ROWS_PER_BATCH; i++) {
        rows.put((long) batch * ROWS_PER_BATCH + i, "b" + batch);
      }
    }
    return rows;
  }

  // ------------------------------------------------------------------ the tests

  @Test
  void streamingSourceFollowsAStreamingWriteThenBatchReadAndLookupJoin() throws Exception {
    URI table = URI.create("s3://tables/follow");
    int batches = 10;
    // The source emits what changed against the previous global snapshot; with the default
    // retention (1) that one may already be expired, and then the whole range comes again.
    JobClient write =
        startWrite(
            table, new Batches(batches, false, batches / 2, 0), ", 'snapshot.retention' = '100'");
    try {
      waitForFirstCommit(table);
      TableEnvironment streaming = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
      streaming.getConfig().getConfiguration().setString("parallelism.default", "1");
      streaming.executeSql(
          sourceDdl(
              "follow", table, ", 'scan.mode' = 'streaming', 'scan.poll-interval-ms' = '100'"));
      TableResult follow = streaming.executeSql("SELECT id, name FROM follow");
      try (CloseableIterator<Row> rows = follow.collect()) {
        // The writer holds the second half back until the first half has been read.
        assertEquals(appended(0, batches / 2), take(rows, batches / 2 * ROWS_PER_BATCH));
        Batches.RELEASED.set(true);
        assertEquals(
            appended(batches / 2, batches), take(rows, (batches - batches / 2) * ROWS_PER_BATCH));
      }
      // Closing the rows cancels the reader, which renews its pin on the table until it stops.
      JobEnd.await(follow);

      TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
      batch.executeSql(sourceDdl("snapshot", table, ", 'scan.mode' = 'batch'"));
      assertEquals(appended(0, batches), collect(batch, "SELECT id, name FROM snapshot"));

      streaming.executeSql(sourceDdl("dim", table, ""));
      long last = (long) batches * ROWS_PER_BATCH - 1;
      TreeMap<Long, String> joined =
          collect(
              streaming,
              "SELECT p.id, d.name FROM (SELECT id, PROCTIME() AS pt FROM (VALUES"
                  + " (CAST(0 AS BIGINT)), (CAST("
                  + last
                  + " AS BIGINT)), (CAST(100000 AS BIGINT))) AS v(id)) AS p"
                  + " LEFT JOIN dim FOR SYSTEM_TIME AS OF p.pt AS d ON p.id = d.id");
      TreeMap<Long, String> expected = new TreeMap<>();
      expected.put(0L, "b0");
      expected.put(last, "b" + (batches - 1));
      expected.put(100000L, null);
      assertEquals(expected, joined);
    } finally {
      JobEnd.cancel(write);
    }
  }

  @Test
  void concurrentBatchReadsOnlySeeWholeGlobalSnapshots() throws Exception {
    URI table = URI.create("s3://tables/versions");
    int batches = 8;
    // The default retention (1): each read pins the global snapshot it plans, which keeps its
    // shard snapshots and files on the table root until the read is done.
    JobClient write = startWrite(table, new Batches(batches, true, Integer.MAX_VALUE, 2), "");
    try {
      waitForFirstCommit(table);
      TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
      batch.getConfig().getConfiguration().setString("parallelism.default", "1");
      batch.executeSql(sourceDdl("versions", table, ", 'scan.mode' = 'batch'"));
      TreeSet<String> seen = new TreeSet<>();
      String last = "v" + (batches - 1);
      long deadline = System.nanoTime() + 120_000_000_000L;
      while (!seen.contains(last)) {
        assertTrue(System.nanoTime() < deadline, "never read " + last + "; read " + seen);
        TreeMap<Long, String> rows = collect(batch, "SELECT id, name FROM versions");
        TreeSet<String> versions = new TreeSet<>(rows.values());
        assertEquals(ROWS_PER_BATCH, rows.size(), "a read saw " + rows);
        assertEquals(ROWS_PER_BATCH - 1, (long) rows.lastKey(), "a read saw " + rows);
        assertEquals(1, versions.size(), "a read mixed global snapshots: " + rows);
        if (seen.add(versions.first())) {
          Batches.READS.incrementAndGet();
        }
      }
      // The gate let batch k through only after reads had seen k / 2 versions.
      assertTrue(seen.size() > (batches - 1) / 2, "versions read: " + seen);
    } finally {
      JobEnd.cancel(write);
    }
  }
}
