package io.cobble.it.minicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.BucketRouter;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.reader.Reader;
import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.flink.LoopbackMiniCluster;
import java.io.InputStream;
import java.math.BigDecimal;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Cobble SQL sink end to end on this line's MiniCluster: a bounded changelog with inserts,
 * updates and deletes is written with {@code INSERT INTO}, then the table's current global snapshot
 * is read with the engine's {@link Reader} and must hold exactly the upsert result.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CobbleSinkIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  private static final Path DATA =
      Paths.get(System.getProperty("cobble.it.dataDir", "target/cobble-data"));

  private static final int BUCKETS = 8;
  private static final int WRITERS = 3;

  private static final String[] NAMES = {"id", "name", "score", "price"};
  private static final TypeInformation<org.apache.flink.types.Row> ROW_TYPE =
      Types.ROW_NAMED(NAMES, Types.LONG, Types.STRING, Types.INT, Types.BIG_DEC);

  /**
   * The changelog: ids 1..50 inserted, 1..20 updated (before/after pairs), 41..50 deleted, 45
   * inserted again with NULLs. Expected: ids 1..40 and 45.
   */
  private static final org.apache.flink.types.Row[] CHANGES = changes();

  private static org.apache.flink.types.Row[] changes() {
    List<org.apache.flink.types.Row> rows = new ArrayList<>();
    for (long id = 1; id <= 50; id++) {
      rows.add(row(RowKind.INSERT, id, "n" + id, (int) id, BigDecimal.valueOf(id, 2)));
    }
    for (long id = 1; id <= 20; id++) {
      rows.add(row(RowKind.UPDATE_BEFORE, id, "n" + id, (int) id, BigDecimal.valueOf(id, 2)));
      rows.add(row(RowKind.UPDATE_AFTER, id, "u" + id, (int) id * 100, BigDecimal.valueOf(-id)));
    }
    for (long id = 41; id <= 50; id++) {
      rows.add(row(RowKind.DELETE, id, "n" + id, (int) id, BigDecimal.valueOf(id, 2)));
    }
    rows.add(row(RowKind.INSERT, 45L, null, null, null));
    return rows.toArray(new org.apache.flink.types.Row[0]);
  }

  /**
   * What a later job writes to the same table: ids 1..10 deleted, 21..30 updated again, 60
   * inserted.
   */
  private static final org.apache.flink.types.Row[] LATER_CHANGES = laterChanges();

  private static org.apache.flink.types.Row[] laterChanges() {
    List<org.apache.flink.types.Row> rows = new ArrayList<>();
    for (long id = 1; id <= 10; id++) {
      rows.add(row(RowKind.DELETE, id, "u" + id, (int) id * 100, BigDecimal.valueOf(-id)));
    }
    for (long id = 21; id <= 30; id++) {
      rows.add(row(RowKind.UPDATE_BEFORE, id, "n" + id, (int) id, BigDecimal.valueOf(id, 2)));
      rows.add(row(RowKind.UPDATE_AFTER, id, "v" + id, (int) id * 7, BigDecimal.valueOf(id)));
    }
    rows.add(row(RowKind.INSERT, 60L, "n60", 60, BigDecimal.valueOf(60, 2)));
    return rows.toArray(new org.apache.flink.types.Row[0]);
  }

  private static org.apache.flink.types.Row row(
      RowKind kind, Long id, String name, Integer score, BigDecimal price) {
    return org.apache.flink.types.Row.ofKind(kind, id, name, score, price);
  }

  private static Map<Long, RowData> expected() {
    Map<Long, RowData> rows = new TreeMap<>();
    for (long id = 1; id <= 40; id++) {
      boolean updated = id <= 20;
      rows.put(
          id,
          stored(
              id,
              (updated ? "u" : "n") + id,
              (int) id * (updated ? 100 : 1),
              updated ? BigDecimal.valueOf(-id) : BigDecimal.valueOf(id, 2)));
    }
    rows.put(45L, GenericRowData.of(45L, null, null, null));
    return rows;
  }

  /** A row as the table stores it. */
  private static RowData stored(long id, String name, int score, BigDecimal price) {
    return GenericRowData.of(
        id, StringData.fromString(name), score, DecimalData.fromBigDecimal(price, 10, 2));
  }

  private static Map<Long, RowData> expectedAfterLaterChanges() {
    Map<Long, RowData> rows = expected();
    for (long id = 1; id <= 10; id++) {
      rows.remove(id);
    }
    for (long id = 21; id <= 30; id++) {
      rows.put(id, stored(id, "v" + id, (int) id * 7, BigDecimal.valueOf(id)));
    }
    rows.put(60L, stored(60L, "n60", 60, BigDecimal.valueOf(60, 2)));
    return rows;
  }

  private StreamExecutionEnvironment env;
  private StreamTableEnvironment tEnv;

  @BeforeEach
  void setUp() {
    env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    tEnv = StreamTableEnvironment.create(env);
    tEnv.createTemporaryView("changes", changelog(CHANGES));
    tEnv.createTemporaryView("later_changes", changelog(LATER_CHANGES));
  }

  /**
   * {@code changes} from one source subtask, which keeps each key's changes in order; the planner
   * and the sink keep it.
   */
  private org.apache.flink.table.api.Table changelog(org.apache.flink.types.Row[] changes) {
    return tEnv.fromChangelogStream(
        env.fromSequence(0, changes.length - 1)
            .setParallelism(1)
            .map(i -> changes[(int) (long) i])
            .returns(ROW_TYPE)
            .setParallelism(1));
  }

  private static String sinkDdl(String table, Path path, String extraOptions) {
    return "CREATE TABLE "
        + table
        + " (id BIGINT, name STRING, score INT, price DECIMAL(10, 2),"
        + " PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'cobble', 'path' = '"
        + path.toUri()
        + "', 'bucket' = '"
        + BUCKETS
        + "', 'sink.parallelism' = '"
        + WRITERS
        + "', 'sink.writer-buffer-memory' = '1mb'"
        + extraOptions
        + ")";
  }

  private void insert(String table) throws Exception {
    insert(table, "changes");
  }

  private void insert(String table, String changelog) throws Exception {
    TableResult result =
        tEnv.executeSql(
            "INSERT INTO "
                + table
                + " SELECT id, name, score, CAST(price AS DECIMAL(10, 2)) FROM "
                + changelog);
    result.await(3, TimeUnit.MINUTES);
  }

  @Test
  void upsertsAndDeletesLandInTheOwningShards() throws Exception {
    Path table = DATA.resolve("sink-upserts").toAbsolutePath();
    tEnv.executeSql(
        sinkDdl("cobble_sink", table, ", 'sink.use-managed-memory-allocator' = 'true'"));
    insert("cobble_sink");
    assertEquals(expected(), readShards(table));
    // Running the same changelog again is an idempotent upsert, not a duplication.
    insert("cobble_sink");
    assertEquals(expected(), readShards(table));
    // A later job resumes the shards it finds and lands its own deletes and updates on them.
    // Flink's upsert materializer would drop them: its state starts empty in a new job, and it
    // discards a retraction of a row it has not seen, so the changes go to the sink as from an
    // upsert source.
    tEnv.getConfig().set("table.exec.sink.upsert-materialize", "NONE");
    insert("cobble_sink", "later_changes");
    assertEquals(expectedAfterLaterChanges(), readShards(table));
  }

  @Test
  void checkpointsFlushWhileAStreamRuns() throws Exception {
    Path table = DATA.resolve("sink-checkpointed").toAbsolutePath();
    env.enableCheckpointing(200);
    // About two seconds of input: checkpoints complete while the writers run, each flushing them.
    tEnv.executeSql(
        "CREATE TABLE slow (id BIGINT, name STRING) WITH ('connector' = 'datagen',"
            + " 'rows-per-second' = '200', 'number-of-rows' = '400', 'fields.id.kind' = 'sequence',"
            + " 'fields.id.start' = '1', 'fields.id.end' = '400', 'fields.name.length' = '3')");
    tEnv.executeSql(sinkDdl("checkpointed", table, ""));
    TableResult result =
        tEnv.executeSql(
            "INSERT INTO checkpointed SELECT id, name, CAST(id AS INT), CAST(id AS DECIMAL(10, 2))"
                + " FROM slow");
    result.await(3, TimeUnit.MINUTES);
    long checkpoints = completedCheckpoints(result.getJobClient().get().getJobID().toString());
    assertTrue(checkpoints > 0, "no checkpoint completed while the job ran");
    Map<Long, RowData> rows = readShards(table);
    assertEquals(400, rows.size());
    for (long id = 1; id <= 400; id++) {
      assertEquals((int) id, rows.get(id).getInt(2), "score of " + id);
    }
  }

  /**
   * Events for the filtered count: keys 0..99 ten times each, keys 100..109 twice, keys 110..119
   * once, in a key order that interleaves them, so every key of 0..99 enters the result (count 1
   * and 2) and must leave it again (count 3).
   */
  private static final String EVENTS =
      "CREATE TABLE events (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '%d',"
          + " 'number-of-rows' = '1030', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',"
          + " 'fields.id.end' = '1030')";

  private static final String FILTERED_COUNT =
      "INSERT INTO counts SELECT k, cnt FROM (SELECT k, COUNT(*) AS cnt FROM (SELECT CASE"
          + " WHEN id <= 1000 THEN id % 100 WHEN id <= 1020 THEN 100 + (id - 1001) / 2"
          + " ELSE 110 + (id - 1021) END AS k FROM events) GROUP BY k) WHERE cnt < 3";

  private static String countsDdl(Path path) {
    return "CREATE TABLE counts (k BIGINT, cnt BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ("
        + "'connector' = 'cobble', 'path' = '"
        + path.toUri()
        + "', 'bucket' = '4', 'sink.parallelism' = '2', 'sink.writer-buffer-memory' = '1mb')";
  }

  /** Keys 100..109 stay with count 2 and 110..119 with count 1; every other key left. */
  private static Map<Long, Long> expectedCounts() {
    Map<Long, Long> counts = new TreeMap<>();
    for (long k = 100; k < 120; k++) {
      counts.put(k, k < 110 ? 2L : 1L);
    }
    return counts;
  }

  /** The committed table through the Cobble source in batch mode. */
  private static Map<Long, Long> readCounts(Path path) throws Exception {
    TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    batch.executeSql(
        "CREATE TABLE counts_read (k BIGINT, cnt BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ("
            + "'connector' = 'cobble', 'path' = '"
            + path.toUri()
            + "')");
    Map<Long, Long> rows = new TreeMap<>();
    try (org.apache.flink.util.CloseableIterator<org.apache.flink.types.Row> it =
        batch.executeSql("SELECT k, cnt FROM counts_read").collect()) {
      while (it.hasNext()) {
        org.apache.flink.types.Row row = it.next();
        assertEquals(null, rows.put((Long) row.getField(0), (Long) row.getField(1)));
      }
    }
    return rows;
  }

  /**
   * A filter above an updating aggregate makes Flink send UPDATE_BEFORE to the upsert sink for a
   * row that leaves the filter, with no UPDATE_AFTER (FLINK-9528): the sink must remove the key.
   * Streaming with checkpoints, so the rows go through the sink's exactly-once commits while they
   * come and go.
   */
  @Test
  void filteredCountRemovesRowsThatLeaveTheFilterInStreaming() throws Exception {
    Path table = DATA.resolve("sink-filtered-count-streaming").toAbsolutePath();
    env.enableCheckpointing(200);
    tEnv.executeSql(String.format(EVENTS, 400));
    tEnv.executeSql(countsDdl(table));
    TableResult result = tEnv.executeSql(FILTERED_COUNT);
    result.await(3, TimeUnit.MINUTES);
    assertTrue(
        completedCheckpoints(result.getJobClient().get().getJobID().toString()) > 0,
        "no checkpoint completed while the job ran");
    assertEquals(expectedCounts(), readCounts(table));
  }

  @Test
  void filteredCountInBatchMode() throws Exception {
    Path table = DATA.resolve("sink-filtered-count-batch").toAbsolutePath();
    TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    batch.executeSql(String.format(EVENTS, 1_000_000));
    batch.executeSql(countsDdl(table));
    batch.executeSql(FILTERED_COUNT).await(3, TimeUnit.MINUTES);
    assertEquals(expectedCounts(), readCounts(table));
  }

  /** The job's completed checkpoints, from the MiniCluster's REST API. */
  private static long completedCheckpoints(String jobId) throws Exception {
    Map<String, String> client = MINI_CLUSTER.getClientConfiguration().toMap();
    URL url =
        new URL(
            "http://"
                + client.getOrDefault("rest.address", "127.0.0.1")
                + ":"
                + client.get("rest.port")
                + "/jobs/"
                + jobId
                + "/checkpoints");
    String json;
    try (InputStream in = url.openStream()) {
      json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    Matcher completed = Pattern.compile("\"completed\"\\s*:\\s*(\\d+)").matcher(json);
    assertTrue(completed.find(), json);
    return Long.parseLong(completed.group(1));
  }

  @Test
  void batchModeWritesTheAggregatedRows() throws Exception {
    Path table = DATA.resolve("sink-batch").toAbsolutePath();
    TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    batch.executeSql(sinkDdl("batch_sink", table, ""));
    // The last value per id wins in a batch GROUP BY: ids 1..40 as in the streaming changelog.
    batch
        .executeSql(
            "INSERT INTO batch_sink SELECT id, MAX(name), MAX(score), MAX(price) FROM (VALUES "
                + batchValues()
                + ") AS t(id, name, score, price) GROUP BY id")
        .await(3, TimeUnit.MINUTES);
    Map<Long, RowData> expected = expected();
    expected.remove(45L);
    assertEquals(expected, readShards(table));
  }

  /** The final rows 1..40 of {@link #expected()} as SQL VALUES rows. */
  private static String batchValues() {
    List<String> rows = new ArrayList<>();
    for (RowData row : expected().values()) {
      if (row.getLong(0) != 45L) {
        rows.add(
            "(CAST("
                + row.getLong(0)
                + " AS BIGINT), '"
                + row.getString(1)
                + "', "
                + row.getInt(2)
                + ", CAST("
                + row.getDecimal(3, 10, 2)
                + " AS DECIMAL(10, 2)))");
      }
    }
    return String.join(", ", rows);
  }

  @Test
  void sourceChecksItsDdlAgainstTheWrittenSchema() throws Exception {
    Path table = DATA.resolve("sink-then-source").toAbsolutePath();
    tEnv.executeSql(sinkDdl("written", table, ""));
    insert("written");
    tEnv.executeSql(
        "CREATE TABLE misread (id BIGINT, name STRING, score BIGINT, price DECIMAL(10, 2),"
            + " PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'cobble', 'path' = '"
            + table.toUri()
            + "')");
    ValidationException e =
        assertThrows(ValidationException.class, () -> tEnv.executeSql("SELECT * FROM misread"));
    String chain = CobbleOnMiniClusterIT.causeChain(e);
    assertTrue(chain.contains("column 'score' is BIGINT in the DDL but INT in the table"), chain);
  }

  @Test
  void stateSourceKindIsNotAvailableYet() {
    tEnv.executeSql(
        "CREATE TABLE st (`key` INT, `value` INT) WITH ('connector' = 'cobble', 'path' = '"
            + DATA.resolve("checkpoints").toAbsolutePath().toUri()
            + "', 'source.kind' = 'state', 'state.name' = 'value-state')");
    ValidationException e =
        assertThrows(ValidationException.class, () -> tEnv.executeSql("SELECT * FROM st"));
    String chain = CobbleOnMiniClusterIT.causeChain(e);
    assertTrue(chain.contains("Option 'source.kind' = 'state'"), chain);
  }

  /**
   * Every row of the table's current global snapshot, read through {@link Reader} as the source
   * does, checking the schema, that the snapshot has one shard per writer owning its contiguous
   * range, and that each row lies in its bucket.
   */
  static Map<Long, RowData> readShards(Path table) throws Exception {
    TableSchemaFile schema;
    try (Storage storage = StorageProviders.open(table.toUri(), StorageOptions.empty())) {
      schema = TableSchemaFile.read(storage).orElseThrow(AssertionError::new);
    }
    assertEquals(Arrays.asList(NAMES), schema.columnNames());
    assertEquals(Arrays.asList("id"), schema.primaryKey());
    assertEquals(BUCKETS, schema.bucketCount());
    assertEquals(WRITERS, schema.shardCount());
    RowType rowType =
        RowType.of(
            new LogicalType[] {
              new BigIntType(false),
              new VarCharType(VarCharType.MAX_LENGTH),
              new IntType(),
              new DecimalType(10, 2)
            },
            NAMES);
    assertEquals(rowType.getChildren(), schema.columnTypes());
    RowCodec codec = new RowCodec(rowType, new int[] {0});
    TableLayout layout = new TableLayout(BUCKETS, WRITERS);
    Map<Long, RowData> rows = new TreeMap<>();
    try (Storage storage = StorageProviders.open(table.toUri(), StorageOptions.empty());
        Reader reader =
            Reader.open(storage, Config.builder().set("total-buckets", BUCKETS).build())) {
      GlobalSnapshot global = reader.snapshot();
      assertEquals(WRITERS, global.parts().size(), "shards of " + table);
      for (int shard = 0; shard < WRITERS; shard++) {
        GlobalSnapshot.Part part = global.partFor(layout.firstBucket(shard));
        assertEquals(
            layout.bucketRanges(shard),
            part.ranges().get(0).lo() + "-" + part.ranges().get(0).hi(),
            "range of " + part.shardId());
      }
      for (int bucket = 0; bucket < BUCKETS; bucket++) {
        try (ScanCursor cursor =
            reader.scan(bucket, TableLayout.FAMILY, null, null, ScanOptions.DEFAULT)) {
          while (cursor.hasNext()) {
            Row stored = cursor.next();
            assertEquals(bucket, BucketRouter.bucketOf(stored.key(), BUCKETS));
            RowData row = codec.decode(stored.key(), stored.columns());
            RowData previous = rows.put(row.getLong(0), row);
            assertEquals(null, previous, "key " + row.getLong(0) + " stored twice");
          }
        }
      }
    }
    return rows;
  }
}
