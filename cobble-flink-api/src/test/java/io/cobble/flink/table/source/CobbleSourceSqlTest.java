package io.cobble.flink.table.source;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.flink.table.codec.RowCodec;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.table.TestSinkTable;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The source through Flink SQL on a local MiniCluster, over tables written like the sink does. */
class CobbleSourceSqlTest {

  private static final RowType ROW =
      RowType.of(
          new LogicalType[] {
            new BigIntType(false),
            new VarCharType(VarCharType.MAX_LENGTH),
            new IntType(),
            new DecimalType(10, 2),
            new TimestampType(3),
            new BooleanType(),
            new VarBinaryType(VarBinaryType.MAX_LENGTH)
          },
          new String[] {"id", "name", "score", "price", "ts", "flag", "data"});

  private static final String COLUMNS =
      "id BIGINT, name STRING, score INT, price DECIMAL(10, 2), ts TIMESTAMP(3), flag BOOLEAN,"
          + " data BYTES, PRIMARY KEY (id) NOT ENFORCED";

  @TempDir Path dir;

  private Path root() {
    return dir.resolve("table");
  }

  private TestSinkTable table() throws Exception {
    return new TestSinkTable(root(), dir.resolve("work"), ROW, List.of("id"), 16, 3, 0);
  }

  private static Object[] row(long id, String name, int generation) {
    boolean nulls = id % 5 == 0;
    return new Object[] {
      id,
      StringData.fromString(name + generation),
      nulls ? null : (int) id * generation,
      nulls ? null : DecimalData.fromBigDecimal(BigDecimal.valueOf(id * 100 + 7, 2), 10, 2),
      nulls
          ? null
          : TimestampData.fromLocalDateTime(LocalDateTime.of(2024, 1, 1, 0, 0).plusSeconds(id)),
      nulls ? null : id % 2 == 0,
      nulls ? null : ("b" + id).getBytes(StandardCharsets.UTF_8)
    };
  }

  /** The row as SQL returns it (external types). */
  private static Row expected(long id, String name, int generation) {
    boolean nulls = id % 5 == 0;
    return Row.of(
        id,
        name + generation,
        nulls ? null : (int) id * generation,
        nulls ? null : BigDecimal.valueOf(id * 100 + 7, 2),
        nulls ? null : LocalDateTime.of(2024, 1, 1, 0, 0).plusSeconds(id),
        nulls ? null : id % 2 == 0,
        nulls ? null : ("b" + id).getBytes(StandardCharsets.UTF_8));
  }

  private String ddl(String name, String extraOptions) {
    return "CREATE TABLE "
        + name
        + " ("
        + COLUMNS
        + ") WITH ('connector' = 'cobble', 'path' = '"
        + root().toUri()
        + "'"
        + extraOptions
        + ")";
  }

  private static TableEnvironment batch() {
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.getConfig().getConfiguration().setString("parallelism.default", "2");
    return env;
  }

  private static TableEnvironment streaming() {
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    env.getConfig().getConfiguration().setString("parallelism.default", "1");
    return env;
  }

  private static List<Row> collect(TableEnvironment env, String query) throws Exception {
    List<Row> rows = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql(query).collect()) {
      it.forEachRemaining(rows::add);
    }
    return rows;
  }

  private static TreeMap<Long, Row> byId(List<Row> rows) {
    TreeMap<Long, Row> map = new TreeMap<>();
    for (Row row : rows) {
      assertTrue(map.put((Long) row.getField(0), row) == null, "row twice: " + row);
    }
    return map;
  }

  private static void assertRowsEqual(TreeMap<Long, Row> expected, TreeMap<Long, Row> actual) {
    assertEquals(expected.keySet(), actual.keySet());
    for (Long id : expected.keySet()) {
      Row want = expected.get(id);
      Row got = actual.get(id);
      for (int f = 0; f < want.getArity(); f++) {
        Object w = want.getField(f);
        Object g = got.getField(f);
        if (w instanceof byte[]) {
          assertArrayEquals((byte[]) w, (byte[]) g, "row " + id + " field " + f);
        } else {
          assertEquals(w, g, "row " + id + " field " + f);
        }
      }
    }
  }

  @Test
  void batchReadsEveryRowOfEveryShardWithTypesAndNulls() throws Exception {
    TreeMap<Long, Row> expected = new TreeMap<>();
    try (TestSinkTable table = table()) {
      for (long id = 1; id <= 400; id++) {
        table.upsert(row(id, "n", 1));
        expected.put(id, expected(id, "n", 1));
      }
      table.commit();
    }
    TableEnvironment env = batch();
    env.executeSql(ddl("t", ", 'source.kind' = 'sink', 'scan.mode' = 'batch'"));
    assertRowsEqual(expected, byId(collect(env, "SELECT * FROM t")));
  }

  @Test
  void checkpointIdReadsThatCheckpointsSnapshotAndLatestTheNewest() throws Exception {
    try (TestSinkTable table = table()) {
      for (long id = 1; id <= 50; id++) {
        table.upsert(row(id, "v", 1));
      }
      table.commit(7);
      for (long id = 1; id <= 50; id += 2) {
        table.upsert(row(id, "v", 2));
      }
      table.delete(row(50, "v", 1));
      table.commit(9);
    }
    TableEnvironment env = batch();
    // Checkpoint ids, not global snapshot numbers (1 and 2 here).
    env.executeSql(ddl("fixed", ", 'scan.checkpoint-id' = '7'"));
    env.executeSql(ddl("newest", ", 'scan.checkpoint-id' = 'latest'"));
    TreeMap<Long, Row> old = byId(collect(env, "SELECT * FROM fixed"));
    TreeMap<Long, Row> now = byId(collect(env, "SELECT * FROM newest"));
    assertEquals(50, old.size());
    assertEquals("v1", old.get(1L).getField(1));
    assertEquals(49, now.size());
    assertEquals("v2", now.get(1L).getField(1));
    assertEquals("v1", now.get(2L).getField(1));

    env.executeSql(ddl("missing", ", 'scan.checkpoint-id' = '99'"));
    assertChain(
        assertThrows(Exception.class, () -> collect(env, "SELECT * FROM missing")),
        "Option 'scan.checkpoint-id' is 99, but the Cobble table at",
        "has no global snapshot of that checkpoint; its retained checkpoint ids are [7, 9]");
    env.executeSql(ddl("sequence", ", 'scan.checkpoint-id' = '1'"));
    assertChain(
        assertThrows(Exception.class, () -> collect(env, "SELECT * FROM sequence")),
        "Option 'scan.checkpoint-id' is 1");
  }

  @Test
  void theDdlMustMatchTheTableNamingTheFirstMismatchingColumn() throws Exception {
    try (TestSinkTable table = table()) {
      table.upsert(row(1, "n", 1));
      table.commit();
    }
    TableEnvironment env = batch();
    env.executeSql(
        "CREATE TABLE t (id BIGINT, name STRING, score BIGINT, price DECIMAL(10, 2),"
            + " ts TIMESTAMP(3), flag BOOLEAN, data BYTES, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('connector' = 'cobble', 'path' = '"
            + root().toUri()
            + "')");
    assertChain(
        assertThrows(Exception.class, () -> collect(env, "SELECT * FROM t")),
        "column 'score' is BIGINT in the DDL but INT in the table");
  }

  @Test
  void rawReadsKeysAndTheSelectedColumnsAsBytes() throws Exception {
    RowCodec codec = new RowCodec(ROW, new int[] {0});
    List<GenericRowData> written = new ArrayList<>();
    try (TestSinkTable table = table()) {
      for (long id = 1; id <= 30; id++) {
        table.upsert(row(id, "r", 1));
        written.add(GenericRowData.of(row(id, "r", 1)));
      }
      table.commit();
    }
    TableEnvironment env = batch();
    env.executeSql(
        "CREATE TABLE raw_t (`key` BYTES, `columns` ARRAY<BYTES>) WITH ('connector' = 'cobble',"
            + " 'source.kind' = 'raw', 'raw.columns' = '5,0', 'path' = '"
            + root().toUri()
            + "')");
    List<Row> rows = collect(env, "SELECT * FROM raw_t");
    assertEquals(30, rows.size());
    Set<String> expected = new HashSet<>();
    for (GenericRowData row : written) {
      byte[][] values = codec.values(row);
      expected.add(hex(codec.key(row)) + "=" + hex(values[5]) + "," + hex(values[0]));
    }
    Set<String> actual = new HashSet<>();
    for (Row row : rows) {
      Object[] columns = (Object[]) row.getField(1);
      actual.add(
          hex((byte[]) row.getField(0))
              + "="
              + hex((byte[]) columns[0])
              + ","
              + hex((byte[]) columns[1]));
    }
    assertEquals(expected, actual);

    env.executeSql(
        "CREATE TABLE raw_wide (`key` BYTES, `columns` ARRAY<BYTES>) WITH ('connector' = 'cobble',"
            + " 'source.kind' = 'raw', 'raw.columns' = '0,6', 'path' = '"
            + root().toUri()
            + "')");
    assertChain(
        assertThrows(Exception.class, () -> collect(env, "SELECT * FROM raw_wide")),
        "Option 'raw.columns' lists column 6, but the rows of the Cobble table at",
        "have 6 columns (0 to 5)");
  }

  @Test
  void streamingEmitsTheLatestSnapshotThenOnlyTheRowsThatChanged() throws Exception {
    try (TestSinkTable table = table()) {
      for (long id = 1; id <= 10; id++) {
        table.upsert(row(id, "s", 1));
      }
      table.commit();
      TableEnvironment env = streaming();
      env.executeSql(ddl("t", ", 'scan.mode' = 'streaming', 'scan.poll-interval-ms' = '50'"));
      try (StreamingRows rows = new StreamingRows(env.executeSql("SELECT id, name FROM t"))) {
        assertEquals(names(1, 10, "s1"), take(rows, 10));

        table.upsert(row(3, "s", 2)); // changed
        table.upsert(row(4, "s", 1)); // rewritten unchanged: not emitted
        table.delete(row(5, "s", 1)); // deleted: not emitted
        table.upsert(row(11, "s", 2)); // new
        table.commit();
        TreeMap<Long, String> changes = take(rows, 2);
        TreeMap<Long, String> expected = new TreeMap<>();
        expected.put(3L, "s2");
        expected.put(11L, "s2");
        assertEquals(expected, changes);

        // With one reader, splits are read in snapshot order: once this row arrives, nothing of
        // the previous snapshot can still come.
        table.upsert(row(12, "s", 3));
        table.commit();
        TreeMap<Long, String> last = new TreeMap<>();
        last.put(12L, "s3");
        assertEquals(last, take(rows, 1));
      }
    }
  }

  @Test
  void streamingWithRetentionOneEmitsExactlyTheChangesAndItsPinLapsesAfterTheJob()
      throws Exception {
    try (TestSinkTable table =
            new TestSinkTable(root(), dir.resolve("work"), ROW, List.of("id"), 16, 3, 1);
        Storage storage = StorageProviders.open(root().toUri(), StorageOptions.empty())) {
      SnapshotStore store = new SnapshotStore(storage);
      for (long id = 1; id <= 30; id++) {
        table.upsert(row(id, "s", 1));
      }
      table.commit();
      TableEnvironment env = streaming();
      // Short, so that the pin of the cancelled job lapses soon; the running job renews it after
      // half the lease, so the enumerator's worker may stall for up to 3 s on a loaded machine
      // (2 s lease: 1 s) before the pin lapses under the running reader and retention drops its
      // snapshot.
      env.executeSql(
          ddl(
              "t",
              ", 'scan.mode' = 'streaming', 'scan.poll-interval-ms' = '50',"
                  + " 'scan.snapshot-lease-ms' = '6000'"));
      long last;
      try (StreamingRows rows = new StreamingRows(env.executeSql("SELECT id, name FROM t"))) {
        assertEquals(names(1, 30, "s1"), take(rows, 30));
        for (int generation = 2; generation <= 6; generation++) {
          table.upsert(row(generation, "s", generation)); // changed
          table.upsert(row(100 + generation, "s", generation)); // new
          table.upsert(row(20, "s", 1)); // rewritten unchanged
          table.commit();
          TreeMap<Long, String> expected = new TreeMap<>();
          expected.put((long) generation, "s" + generation);
          expected.put(100L + generation, "s" + generation);
          assertEquals(expected, take(rows, 2), "changes of commit " + generation);
        }
        // The reader moved on: once its pin holds only the newest snapshot, the next commit's
        // retention removes everything older, files included.
        long newest = store.requireCurrentGlobalId();
        waitUntil(() -> pins(store).equals(Set.of(newest)), "the pin moves to " + newest);
        table.upsert(row(999, "s", 7));
        last = table.commit();
        assertEquals(List.of(newest, last), store.globalIds());
        assertEquals(referencedFiles(store), new HashSet<>(storage.list("data/")));
        assertEquals(names(999, 999, "s7"), take(rows, 1), "nothing came again before it");
      }
      // The job is gone: its pin lapses, and retention goes back to one snapshot.
      waitUntil(
          () -> {
            table.upsert(row(1000, "s", 8));
            table.commit();
            return store.globalPins().isEmpty() && store.globalIds().size() == 1;
          },
          "the pin of the cancelled job lapses");
      assertEquals(referencedFiles(store), new HashSet<>(storage.list("data/")));
    }
  }

  @Test
  void withCheckpointsThePinMovesOnOnceACheckpointAfterTheSplitsCompletes() throws Exception {
    try (TestSinkTable table =
            new TestSinkTable(root(), dir.resolve("work"), ROW, List.of("id"), 16, 3, 1);
        Storage storage = StorageProviders.open(root().toUri(), StorageOptions.empty())) {
      SnapshotStore store = new SnapshotStore(storage);
      for (long id = 1; id <= 30; id++) {
        table.upsert(row(id, "c", 1));
      }
      table.commit();
      TableEnvironment env = streaming();
      env.getConfig().getConfiguration().setString("execution.checkpointing.interval", "100 ms");
      env.executeSql(ddl("t", ", 'scan.mode' = 'streaming', 'scan.poll-interval-ms' = '50'"));
      try (StreamingRows rows = new StreamingRows(env.executeSql("SELECT id, name FROM t"))) {
        assertEquals(names(1, 30, "c1"), take(rows, 30));
        for (int generation = 2; generation <= 4; generation++) {
          table.upsert(row(generation, "c", generation));
          table.commit();
          assertEquals(names(generation, generation, "c" + generation), take(rows, 1));
        }
        long newest = store.requireCurrentGlobalId();
        waitUntil(() -> pins(store).equals(Set.of(newest)), "the pin moves to " + newest);
        table.upsert(row(5, "c", 5));
        assertEquals(List.of(newest, table.commit()), store.globalIds());
        assertEquals(names(5, 5, "c5"), take(rows, 1));
      }
    }
  }

  /**
   * A streaming query's rows. Closing cancels the job and waits until it has ended, so no reader or
   * enumerator of it still writes pins under the test's directory when JUnit deletes it.
   */
  private static final class StreamingRows implements CloseableIterator<Row> {
    private final TableResult result;
    private final CloseableIterator<Row> rows;

    StreamingRows(TableResult result) {
      this.result = result;
      this.rows = result.collect();
    }

    @Override
    public boolean hasNext() {
      return rows.hasNext();
    }

    @Override
    public Row next() {
      return rows.next();
    }

    @Override
    public void close() throws Exception {
      rows.close();
      result
          .getJobClient()
          .orElseThrow()
          .getJobExecutionResult()
          .handle((ended, cancelled) -> ended)
          .get(2, TimeUnit.MINUTES);
    }
  }

  private static Set<Long> pins(SnapshotStore store) {
    Set<Long> ids = new HashSet<>();
    store.globalPins().forEach(pin -> ids.addAll(pin.globalIds()));
    return ids;
  }

  private static Set<String> referencedFiles(SnapshotStore store) {
    Set<String> files = new HashSet<>();
    for (String shard : store.shardIds()) {
      for (long id : store.snapshotIds(shard)) {
        store.require(shard, id).files().forEach(f -> files.add(f.volumePath()));
      }
    }
    return files;
  }

  private static void waitUntil(BooleanSupplier done, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting until " + what);
      }
      Thread.sleep(100);
    }
  }

  private static TreeMap<Long, String> names(long from, long to, String name) {
    TreeMap<Long, String> map = new TreeMap<>();
    for (long id = from; id <= to; id++) {
      map.put(id, name);
    }
    return map;
  }

  private static TreeMap<Long, String> take(CloseableIterator<Row> rows, int count) {
    TreeMap<Long, String> taken = new TreeMap<>();
    for (int i = 0; i < count; i++) {
      Row row = rows.next();
      assertTrue(
          taken.put((Long) row.getField(0), (String) row.getField(1)) == null, "twice: " + row);
    }
    return taken;
  }

  @Test
  void lookupJoinFindsHitsAndMisses() throws Exception {
    try (TestSinkTable table = table()) {
      for (long id = 1; id <= 100; id++) {
        table.upsert(row(id, "d", 1));
      }
      table.commit();
    }
    TableEnvironment env = streaming();
    env.getConfig().getConfiguration().setString("parallelism.default", "2");
    // With a row cache: the repeated probes (e, f, g) are answered from it.
    env.executeSql(
        ddl("dim", ", 'source.block-cache-memory' = '1mb', 'source.row-cache-memory' = '1mb'"));
    env.executeSql(
        "CREATE TEMPORARY VIEW probes AS SELECT id, tag, PROCTIME() AS pt FROM (VALUES"
            + " (CAST(1 AS BIGINT), 'a'), (CAST(42 AS BIGINT), 'b'), (CAST(1000 AS BIGINT), 'c'),"
            + " (CAST(100 AS BIGINT), 'd'), (CAST(1 AS BIGINT), 'e'), (CAST(1000 AS BIGINT),"
            + " 'f'), (CAST(42 AS BIGINT), 'g')) AS v(id, tag)");
    List<Row> rows =
        collect(
            env,
            "SELECT p.tag, p.id, d.name, d.score FROM probes AS p LEFT JOIN dim FOR SYSTEM_TIME"
                + " AS OF p.pt AS d ON p.id = d.id");
    TreeMap<String, String> byTag = new TreeMap<>();
    for (Row row : rows) {
      byTag.put((String) row.getField(0), row.getField(2) + "/" + row.getField(3));
    }
    TreeMap<String, String> expected = new TreeMap<>();
    expected.put("a", "d1/1");
    expected.put("b", "d1/42");
    expected.put("c", "null/null");
    expected.put("d", "d1/null");
    expected.put("e", "d1/1");
    expected.put("f", "null/null");
    expected.put("g", "d1/42");
    assertEquals(expected, byTag);
  }

  @Test
  void lookupOnAColumnOutsideThePrimaryKeyIsRejected() throws Exception {
    try (TestSinkTable table = table()) {
      table.upsert(row(1, "d", 1));
      table.commit();
    }
    TableEnvironment env = streaming();
    env.executeSql(ddl("dim", ""));
    env.executeSql(
        "CREATE TEMPORARY VIEW probes AS SELECT name, PROCTIME() AS pt FROM (VALUES ('d1'))"
            + " AS v(name)");
    assertChain(
        assertThrows(
            Exception.class,
            () ->
                collect(
                    env,
                    "SELECT p.name, d.id FROM probes AS p JOIN dim FOR SYSTEM_TIME AS OF p.pt"
                        + " AS d ON p.name = d.name")),
        "need equality conditions on the full PRIMARY KEY [id], but the join condition uses"
            + " [name]");
  }

  private static String hex(byte[] bytes) {
    StringBuilder out = new StringBuilder();
    for (byte b : bytes) {
      out.append(String.format("%02x", b));
    }
    return out.toString();
  }

  private static void assertChain(Throwable e, String... texts) {
    StringBuilder chain = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      chain.append(t.getClass().getName()).append(": ").append(t.getMessage()).append('\n');
    }
    for (String text : texts) {
      assertTrue(chain.toString().contains(text), "'" + text + "' not in:\n" + chain);
    }
  }
}
