package io.cobble.flink.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.table.TestSinkTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.SourceProvider;
import org.apache.flink.table.connector.source.lookup.AsyncLookupFunctionProvider;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.RowType;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One test per source rule of the specification, each asserting the message users see. */
class SourceValidationTest {

  @TempDir Path dir;

  private Path sinkTable;

  @BeforeEach
  void writeASinkTable() throws Exception {
    sinkTable = dir.resolve("sink-table");
    RowType rowType =
        (RowType)
            keyed(sinkTable).table().getResolvedSchema().toPhysicalRowDataType().getLogicalType();
    try (TestSinkTable table =
        new TestSinkTable(sinkTable, dir.resolve("work"), rowType, List.of("id"), 8, 2, 0)) {
      table.upsert(1L, StringData.fromString("one"), 1);
      table.commit();
    }
  }

  private static FactoryFixture keyed(Path path) {
    return new FactoryFixture(path)
        .column("id", DataTypes.BIGINT())
        .column("name", DataTypes.STRING())
        .column("score", DataTypes.INT())
        .primaryKey("id");
  }

  private FactoryFixture sink() {
    return keyed(sinkTable).option("source.kind", "sink");
  }

  private FactoryFixture raw() {
    return new FactoryFixture(sinkTable)
        .column("key", DataTypes.BYTES())
        .column("columns", DataTypes.ARRAY(DataTypes.BYTES()))
        .option("source.kind", "raw")
        .option("raw.columns", "0,1");
  }

  /** The FLIP-27 source the planner would run for a scan. */
  private static Source<?, ?, ?> scan(ScanTableSource source) {
    return ((SourceProvider) source.getScanRuntimeProvider(null)).createSource();
  }

  @Test
  void sourceKindMustBeKnown() {
    sink()
        .option("source.kind", "table")
        .sourceFails("Option 'source.kind' must be one of auto, sink, state, raw, but is 'table'.");
  }

  @Test
  void stateKindIsNotAvailableYet() {
    keyed(dir)
        .option("source.kind", "state")
        .option("state.name", "value-state")
        .sourceFails("Option 'source.kind' = 'state'", "not available yet");
  }

  @Test
  void checkpointIdMustBeLatestOrPositive() {
    sink()
        .option("scan.checkpoint-id", "0")
        .sourceFails(
            "Option 'scan.checkpoint-id' must be 'latest' or a positive checkpoint id, but is '0'.");
    sink().option("scan.checkpoint-id", "newest").sourceFails("but is 'newest'");
  }

  @Test
  void scanModeMustBeBatchOrStreaming() {
    sink()
        .option("scan.mode", "continuous")
        .sourceFails("Option 'scan.mode' must be 'batch' or 'streaming', but is 'continuous'.");
  }

  @Test
  void streamingNeedsLatest() {
    sink()
        .option("scan.mode", "streaming")
        .option("scan.checkpoint-id", "12")
        .sourceFails("Option 'scan.mode' = 'streaming'", "'scan.checkpoint-id' = 'latest'");
  }

  @Test
  void pollIntervalMustBePositive() {
    sink()
        .option("scan.poll-interval-ms", "0")
        .sourceFails("Option 'scan.poll-interval-ms' must be > 0, but is 0.");
  }

  @Test
  void theSnapshotLeaseMustOutlastThePollInterval() {
    sink()
        .option("scan.poll-interval-ms", "5000")
        .option("scan.snapshot-lease-ms", "5000")
        .sourceFails(
            "Option 'scan.snapshot-lease-ms' must be greater than 'scan.poll-interval-ms' (5000),"
                + " since the lease is renewed at each poll, but is 5000.");
    sink().option("scan.snapshot-lease-ms", "60000").source();
  }

  @Test
  void bucketMustBePositiveWhenGiven() {
    sink().option("bucket", "0").sourceFails("Option 'bucket' must be > 0 when given, but is 0");
  }

  @Test
  void bucketMustMatchTheTable() {
    sink().option("bucket", "16").sourceFails("Option 'bucket' is 16 but the table", "8 buckets");
  }

  @Test
  void blockCacheMemoryMustBeASize() {
    sink().option("source.block-cache-memory", "lots").sourceFails("source.block-cache-memory");
  }

  @Test
  void rowCacheMemoryMustBeASize() {
    sink().option("source.row-cache-memory", "-1mb").sourceFails("source.row-cache-memory");
  }

  @Test
  void defaultsGiveABoundedSinkSource() {
    ScanTableSource source = (ScanTableSource) sink().source();
    assertEquals(Boundedness.BOUNDED, scan(source).getBoundedness());
  }

  @Test
  void streamingModeGivesAnUnboundedSource() {
    ScanTableSource source = (ScanTableSource) sink().option("scan.mode", "streaming").source();
    assertEquals(Boundedness.CONTINUOUS_UNBOUNDED, scan(source).getBoundedness());
  }

  @Test
  void aBatchReadNeedsAGlobalSnapshot() throws Exception {
    Path unwritten = dir.resolve("unwritten");
    Files.createDirectories(unwritten);
    try (Storage storage = StorageProviders.open(unwritten.toUri(), StorageOptions.empty())) {
      TableSchemaFile.of(keyed(unwritten).table().getResolvedSchema(), 8, 2).publish(storage);
    }
    keyed(unwritten)
        .option("source.kind", "sink")
        .sourceFails("has no global snapshot yet (no global/CURRENT)");
    // A streaming read waits for the first snapshot.
    keyed(unwritten).option("source.kind", "sink").option("scan.mode", "streaming").source();
  }

  @Test
  void aFixedCheckpointIdMustExist() {
    sink()
        .option("scan.checkpoint-id", "7")
        .sourceFails(
            "Option 'scan.checkpoint-id' is 7",
            "has no global snapshot of that checkpoint; its retained checkpoint ids are [1]");
  }

  @Test
  void sinkTablesNeedAPrimaryKey() {
    new FactoryFixture(sinkTable)
        .column("id", DataTypes.BIGINT())
        .column("name", DataTypes.STRING())
        .option("source.kind", "sink")
        .sourceFails("A Cobble sink table needs a PRIMARY KEY");
  }

  @Test
  void sinkTablesNeedAValueColumn() {
    new FactoryFixture(sinkTable)
        .column("id", DataTypes.BIGINT())
        .primaryKey("id")
        .option("source.kind", "sink")
        .sourceFails("needs at least one physical column outside the PRIMARY KEY");
  }

  @Test
  void sinkSourceNeedsAPublishedTable() {
    keyed(dir.resolve("empty"))
        .option("source.kind", "sink")
        .sourceFails("No Cobble sink table at", "table-schema");
  }

  @Test
  void sinkSourceNamesTheFirstMismatchingColumn() {
    new FactoryFixture(sinkTable)
        .column("id", DataTypes.BIGINT())
        .column("name", DataTypes.STRING())
        .column("score", DataTypes.BIGINT())
        .primaryKey("id")
        .option("source.kind", "sink")
        .sourceFails("column 'score' is BIGINT in the DDL but INT in the table");
  }

  @Test
  void lookupNeedsTheFullPrimaryKey() {
    // The published table is keyed by id alone: a join on (name) misses it, one on (id) is whole.
    LookupTableSource sinkSource = (LookupTableSource) sink().source();
    FactoryFixture.assertChain(
        assertThrows(
            Exception.class,
            () -> sinkSource.getLookupRuntimeProvider(FactoryFixture.lookupOn(new int[] {1}))),
        "need equality conditions on the full PRIMARY KEY [id]");
    assertTrue(
        sinkSource.getLookupRuntimeProvider(FactoryFixture.lookupOn(new int[] {0}))
            instanceof LookupFunctionProvider);
  }

  @Test
  void lookupUsesTopLevelKeyColumnsOnly() {
    LookupTableSource source = (LookupTableSource) sink().source();
    FactoryFixture.assertChain(
        assertThrows(
            Exception.class,
            () -> source.getLookupRuntimeProvider(FactoryFixture.lookupOn(new int[] {0, 1}))),
        "support only top-level key columns");
  }

  @Test
  void stateOptionsBelongToTheStateKind() {
    sink()
        .option("state.name", "s")
        .sourceFails("Option 'state.name' applies only to source.kind = 'state'");
  }

  @Test
  void rawColumnsBelongToTheRawKind() {
    sink()
        .option("raw.columns", "0")
        .sourceFails("Option 'raw.columns' applies only to source.kind = 'raw'");
  }

  @Test
  void rawNeedsRawColumns() {
    raw()
        .without("raw.columns")
        .sourceFails("Option 'raw.columns' is required for source.kind = 'raw'");
  }

  @Test
  void rawColumnsAllIsNotSupportedYet() {
    raw()
        .option("raw.columns", "all")
        .sourceFails("Option 'raw.columns' = 'all' is not supported yet");
  }

  @Test
  void rawColumnsAreCommaSeparatedIndexes() {
    raw()
        .option("raw.columns", "0,x")
        .sourceFails("Option 'raw.columns' must be comma-separated column indexes", "'x'");
    raw().option("raw.columns", "-1").sourceFails("column indexes start at 0");
    raw().option("raw.columns", "1,1").sourceFails("lists column 1 twice");
  }

  @Test
  void rawDdlIsExactlyKeyAndColumns() {
    new FactoryFixture(dir)
        .column("key", DataTypes.BYTES())
        .column("columns", DataTypes.ARRAY(DataTypes.STRING()))
        .option("source.kind", "raw")
        .option("raw.columns", "0")
        .sourceFails("has exactly the columns `key` BYTES, `columns` ARRAY<BYTES>");
  }

  @Test
  void rawBucketMustMatchTheTable() {
    raw()
        .option("bucket", "16")
        .sourceFails("Option 'bucket' is 16 but the Cobble table at", "has 8 buckets");
  }

  @Test
  void rawColumnsMustExistInTheTable() {
    raw()
        .option("raw.columns", "2")
        .sourceFails("Option 'raw.columns' lists column 2", "have 2 columns (0 to 1)");
  }

  @Test
  void rawHasNoPrimaryKey() {
    raw().primaryKey("key").sourceFails("must not declare a PRIMARY KEY");
  }

  @Test
  void rawDoesNotSupportLookup() {
    LookupTableSource source = (LookupTableSource) raw().source();
    FactoryFixture.assertChain(
        assertThrows(
            Exception.class,
            () -> source.getLookupRuntimeProvider(FactoryFixture.lookupOn(new int[] {0}))),
        "Lookup joins are not supported on a raw Cobble source");
  }

  @Test
  void autoPicksSinkForASinkTable() {
    assertEquals("Cobble sink source", keyed(sinkTable).source().asSummaryString());
  }

  @Test
  void autoChecksTheDdlOfASinkTable() {
    new FactoryFixture(sinkTable)
        .column("id", DataTypes.BIGINT())
        .column("title", DataTypes.STRING())
        .column("score", DataTypes.INT())
        .primaryKey("id")
        .sourceFails("column 'title' is in the DDL but not in the table");
  }

  @Test
  void autoPicksStateForACheckpoint() throws Exception {
    Path checkpoints = dir.resolve("checkpoints");
    Files.createDirectories(checkpoints.resolve("chk-3"));
    Files.write(checkpoints.resolve("chk-3").resolve("_metadata"), new byte[] {1});
    keyed(checkpoints).sourceFails("(detected from the checkpoint at", "not available yet");
  }

  /** A concrete {@code chk-<n>} directory is a checkpoint by its name, with or without files. */
  @Test
  void autoPicksStateForAConcreteCheckpointDirectory() throws Exception {
    Path chk = dir.resolve("checkpoints").resolve("chk-17");
    Files.createDirectories(chk);
    keyed(chk).sourceFails("(detected from the checkpoint at", "not available yet");
    // Only chk-<digits> names one: a look-alike stays undecided.
    Path lookAlike = dir.resolve("checkpoints").resolve("chk-latest");
    Files.createDirectories(lookAlike);
    keyed(lookAlike).sourceFails("Option 'source.kind' = 'auto' cannot decide");
  }

  @Test
  void autoRejectsWhatItCannotDecideAndNeverPicksRaw() {
    keyed(dir.resolve("nothing"))
        .sourceFails(
            "Option 'source.kind' = 'auto' cannot decide",
            "Set 'source.kind' to 'sink', 'state', or 'raw'");
  }

  @Test
  void sinkSourceColumnsMayComeInAnyOrderAndLeaveValueColumnsOut() {
    // Key last, score before name; then the key alone with one value column.
    LookupTableSource reordered =
        (LookupTableSource)
            new FactoryFixture(sinkTable)
                .column("score", DataTypes.INT())
                .column("name", DataTypes.STRING())
                .column("id", DataTypes.BIGINT())
                .primaryKey("id")
                .source();
    assertTrue(
        reordered.getLookupRuntimeProvider(FactoryFixture.lookupOn(new int[] {2}))
            instanceof LookupFunctionProvider);
    new FactoryFixture(sinkTable)
        .column("id", DataTypes.BIGINT())
        .column("score", DataTypes.INT())
        .primaryKey("id")
        .source();
  }

  @Test
  void sinkSourceNamesAColumnTheTableDoesNotHave() {
    new FactoryFixture(sinkTable)
        .column("id", DataTypes.BIGINT())
        .column("nick", DataTypes.STRING())
        .primaryKey("id")
        .sourceFails(
            "column 'nick' is in the DDL but not in the table, whose columns are [id, name,"
                + " score]");
  }

  @Test
  void sinkSourceNeedsTheTablesPrimaryKey() {
    new FactoryFixture(sinkTable)
        .column("id", DataTypes.BIGINT())
        .column("name", DataTypes.STRING())
        .column("score", DataTypes.INT())
        .primaryKey("id", "name")
        .sourceFails("the PRIMARY KEY is [id, name] in the DDL but [id] in the table");
  }

  @Test
  void lookupAsyncGivesTheAsyncFunction() {
    LookupTableSource sync = (LookupTableSource) sink().source();
    assertTrue(
        sync.getLookupRuntimeProvider(FactoryFixture.lookupOn(new int[] {0}))
            instanceof LookupFunctionProvider);
    LookupTableSource async = (LookupTableSource) sink().option("lookup.async", "true").source();
    assertTrue(
        async.getLookupRuntimeProvider(FactoryFixture.lookupOn(new int[] {0}))
            instanceof AsyncLookupFunctionProvider);
  }

  @Test
  void lookupAsyncMaxInFlightMustBePositive() {
    sink()
        .option("lookup.async.max-in-flight", "0")
        .sourceFails("Option 'lookup.async.max-in-flight' must be > 0, but is 0.");
  }
}
