package io.cobble.it.minicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.shim.RunningFlink;
import io.cobble.testing.flink.LoopbackMiniCluster;
import io.cobble.testing.table.TestSinkTable;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Cobble dist jar of this module's line on a Flink MiniCluster of that line: the table factory
 * is discovered, validates its options, and the line guard accepts the running Flink. The same
 * source runs in it-minicluster-1.17, -1.19 and -2.0.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CobbleOnMiniClusterIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(2);

  private static final String LINE = System.getProperty("cobble.it.line");
  private static final String FLINK_VERSION = System.getProperty("cobble.it.flinkVersion");
  private static final Path DATA =
      Paths.get(System.getProperty("cobble.it.dataDir", "target/cobble-data"));

  private StreamExecutionEnvironment env;
  private StreamTableEnvironment tEnv;

  @BeforeEach
  void setUp() {
    env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    tEnv = StreamTableEnvironment.create(env);
    tEnv.executeSql(
        "CREATE TABLE gen (id BIGINT, v STRING) WITH ('connector' = 'datagen',"
            + " 'number-of-rows' = '100', 'fields.id.kind' = 'sequence',"
            + " 'fields.id.start' = '1', 'fields.id.end' = '100')");
  }

  private static String sinkDdl(String table, String columns, String options) {
    return "CREATE TABLE "
        + table
        + " ("
        + columns
        + ") WITH ('connector' = 'cobble'"
        + options
        + ")";
  }

  private static String path(String name) {
    return ", 'path' = '" + DATA.resolve(name).toAbsolutePath().toUri() + "'";
  }

  private static final String KEYED = "id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED";
  private static final String SINK_OPTS = ", 'bucket' = '4', 'sink.parallelism' = '1'";

  /** Asserts that the INSERT fails with a ValidationException whose cause chain names texts. */
  private void assertInsertFails(String table, String... texts) {
    ValidationException e =
        assertThrows(
            ValidationException.class,
            () -> tEnv.executeSql("INSERT INTO " + table + " SELECT id, v FROM gen"));
    String chain = causeChain(e);
    for (String text : texts) {
      assertTrue(chain.contains(text), "'" + text + "' not in:\n" + chain);
    }
  }

  static String causeChain(Throwable e) {
    StringBuilder text = new StringBuilder();
    List<Throwable> seen = new ArrayList<>();
    for (Throwable t = e; t != null && !seen.contains(t); t = t.getCause()) {
      seen.add(t);
      text.append(t.getClass().getName()).append(": ").append(t.getMessage()).append('\n');
    }
    return text.toString();
  }

  @Test
  void shimLoaderServesThisLine() {
    assertEquals(FLINK_VERSION, RunningFlink.version());
    assertEquals(LINE, ShimLoader.current().line().lineName());
  }

  @Test
  void missingPathIsNamed() {
    tEnv.executeSql(sinkDdl("t", KEYED, SINK_OPTS));
    ValidationException e =
        assertThrows(
            ValidationException.class,
            () -> tEnv.executeSql("INSERT INTO t SELECT id, v FROM gen"));
    assertTrue(
        java.util.regex.Pattern.compile("Missing required options are:\\s+path\\b")
            .matcher(causeChain(e))
            .find(),
        causeChain(e));
  }

  @Test
  void missingBucketIsNamed() {
    tEnv.executeSql(sinkDdl("t", KEYED, path("no-bucket") + ", 'sink.parallelism' = '1'"));
    assertInsertFails("t", "'bucket'");
  }

  @Test
  void zeroSinkParallelismIsNamed() {
    tEnv.executeSql(
        sinkDdl("t", KEYED, path("zero-par") + ", 'bucket' = '4', 'sink.parallelism' = '0'"));
    assertInsertFails("t", "'sink.parallelism' must be > 0");
  }

  @Test
  void missingPrimaryKeyIsNamed() {
    tEnv.executeSql(sinkDdl("t", "id BIGINT, v STRING", path("no-pk") + SINK_OPTS));
    assertInsertFails("t", "PRIMARY KEY");
  }

  @Test
  void keyOnlyTableIsRejected() {
    tEnv.executeSql(
        sinkDdl(
            "t", "id BIGINT, v STRING, PRIMARY KEY (id, v) NOT ENFORCED", path("k") + SINK_OPTS));
    assertInsertFails("t", "at least one physical column outside the PRIMARY KEY");
  }

  @Test
  void sinkPathWithoutAnyFileSystemIsNamed() {
    tEnv.executeSql(sinkDdl("t", KEYED, ", 'path' = 'nosuch://bucket/table'" + SINK_OPTS));
    assertInsertFails(
        "t", "The Flink file system provider cannot open 'nosuch://bucket/table' (scheme 'nosuch'");
  }

  @Test
  void sourceOnAnUnknownPathAsksForTheKind() {
    tEnv.executeSql(sinkDdl("t", KEYED, path("valid-source")));
    ValidationException e =
        assertThrows(ValidationException.class, () -> tEnv.executeSql("SELECT * FROM t"));
    assertTrue(
        causeChain(e).contains("Option 'source.kind' = 'auto' cannot decide"), causeChain(e));
  }

  @Test
  void rawSourceRejectsLookups(@TempDir Path dir) throws Exception {
    // A raw source reads any Cobble table with a global snapshot: write a small one.
    RowType row =
        RowType.of(
            new LogicalType[] {new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
            new String[] {"id", "v"});
    try (TestSinkTable table =
        new TestSinkTable(dir.resolve("raw"), dir.resolve("work"), row, List.of("id"), 4, 1, 0)) {
      table.upsert(1L, StringData.fromString("one"));
      table.commit();
    }
    tEnv.executeSql(
        "CREATE TABLE raw_t (`key` BYTES, `columns` ARRAY<BYTES>) WITH ('connector' = 'cobble',"
            + " 'path' = '"
            + dir.resolve("raw").toUri()
            + "', 'source.kind' = 'raw', 'raw.columns' = '0')");
    tEnv.executeSql(
        "CREATE TEMPORARY VIEW probes AS SELECT CAST(v AS BYTES) AS k, PROCTIME() AS pt FROM gen");
    // The planner wraps the source's ValidationException while it applies its lookup rules.
    Exception e =
        assertThrows(
            Exception.class,
            () ->
                tEnv.executeSql(
                    "SELECT p.k FROM probes AS p JOIN raw_t FOR SYSTEM_TIME AS OF p.pt AS r"
                        + " ON p.k = r.`key`"));
    assertTrue(
        causeChain(e).contains("Lookup joins are not supported on a raw Cobble source"),
        causeChain(e));
  }

  @Test
  void sqlJobRuns() throws Exception {
    tEnv.executeSql("CREATE TABLE hole (id BIGINT, v STRING) WITH ('connector' = 'blackhole')");
    TableResult result = tEnv.executeSql("INSERT INTO hole SELECT id, v FROM gen");
    result.await(2, TimeUnit.MINUTES);
    assertTrue(result.getJobClient().isPresent());
    assertEquals(
        "FINISHED", result.getJobClient().get().getJobStatus().get(1, TimeUnit.MINUTES).name());
  }

  @Test
  void dataStreamJobRuns() throws Exception {
    long sum = 0;
    long count = 0;
    try (CloseableIterator<Long> it =
        env.fromSequence(1, 100).map(x -> x * 2).returns(Types.LONG).executeAndCollect()) {
      while (it.hasNext()) {
        sum += it.next();
        count++;
      }
    }
    assertEquals(100, count);
    assertEquals(10100, sum);
  }
}
