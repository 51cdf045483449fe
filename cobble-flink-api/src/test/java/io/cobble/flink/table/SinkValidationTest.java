package io.cobble.flink.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.flink.table.sink.CobbleDynamicTableSink;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.nio.file.Path;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One test per sink rule of the specification, each asserting the message users see. */
class SinkValidationTest {

  @TempDir Path dir;

  private FactoryFixture valid() {
    return new FactoryFixture(dir)
        .column("id", DataTypes.BIGINT())
        .column("name", DataTypes.STRING())
        .primaryKey("id")
        .option("bucket", "4")
        .option("sink.parallelism", "2");
  }

  @Test
  void validTableGivesAnUpsertSink() {
    DynamicTableSink sink = valid().sink();
    assertInstanceOf(CobbleDynamicTableSink.class, sink);
    assertEquals(ChangelogMode.upsert(), sink.getChangelogMode(ChangelogMode.all()));
    assertEquals(ChangelogMode.insertOnly(), sink.getChangelogMode(ChangelogMode.insertOnly()));
  }

  @Test
  void bucketIsRequired() {
    valid().without("bucket").sinkFails("Option 'bucket' is required for a Cobble sink table.");
  }

  @Test
  void bucketMustBePositive() {
    valid().option("bucket", "0").sinkFails("Option 'bucket' must be > 0, but is 0.");
  }

  @Test
  void sinkParallelismIsRequired() {
    valid()
        .without("sink.parallelism")
        .sinkFails("Option 'sink.parallelism' is required for a Cobble sink table.");
  }

  @Test
  void sinkParallelismMustBePositive() {
    valid().option("sink.parallelism", "-1").sinkFails("'sink.parallelism' must be > 0");
  }

  @Test
  void sinkParallelismMustNotExceedBuckets() {
    valid()
        .option("sink.parallelism", "5")
        .sinkFails("Option 'sink.parallelism' (5) must not exceed 'bucket' (4)");
  }

  @Test
  void writerBufferMustBePositive() {
    valid()
        .option("sink.writer-buffer-memory", "0b")
        .sinkFails("Option 'sink.writer-buffer-memory' must be > 0.");
  }

  @Test
  void compactAtEndOfInputMustBeABoolean() {
    valid()
        .option("sink.compact-at-end-of-input", "sometimes")
        .sinkFails("Invalid value for option 'sink.compact-at-end-of-input'.");
    assertInstanceOf(
        CobbleDynamicTableSink.class,
        valid().option("sink.compact-at-end-of-input", "FALSE").sink());
  }

  @Test
  void snapshotRetentionMustBePositive() {
    valid().option("snapshot.retention", "0").sinkFails("'snapshot.retention' must be > 0");
  }

  @Test
  void primaryKeyIsRequired() {
    new FactoryFixture(dir)
        .column("id", DataTypes.BIGINT())
        .column("name", DataTypes.STRING())
        .option("bucket", "4")
        .option("sink.parallelism", "1")
        .sinkFails("A Cobble sink table needs a PRIMARY KEY");
  }

  @Test
  void aValueColumnIsRequired() {
    new FactoryFixture(dir)
        .column("id", DataTypes.BIGINT())
        .primaryKey("id")
        .option("bucket", "4")
        .option("sink.parallelism", "1")
        .sinkFails("needs at least one physical column outside the PRIMARY KEY [id]");
  }

  @Test
  void unsupportedColumnTypesAreNamed() {
    valid()
        .column("tags", DataTypes.ARRAY(DataTypes.INT()))
        .sinkFails("Column 'tags' has type ARRAY<INT>, which a Cobble table cannot store");
  }

  @Test
  void aSchemeWithoutAnyFileSystemIsNamed() {
    // No built-in provider: Flink's file systems are asked, and none serves the scheme either.
    valid()
        .option("path", "nosuch://bucket/table")
        .sinkFails(
            "The Flink file system provider cannot open 'nosuch://bucket/table' (scheme 'nosuch'",
            "Flink has no file system for scheme 'nosuch'");
  }

  /** A built-in provider keeps rejecting keys it does not know, and says which provider it is. */
  @Test
  void aKeyTheBuiltInProviderDoesNotKnowIsNamedWithTheProvider() {
    valid()
        .option("storage.option.fs.azure.account.key.acct", "k")
        .sinkFails(
            "Unknown storage option 'fs.azure.account.key.acct' for the 'file' storage provider");
    valid()
        .option("path", "s3://bucket/table")
        .option("storage.option.regoin", "us-east-1")
        .sinkFails("Unknown storage option 'regoin' for the 's3' storage provider");
  }

  @Test
  void unknownOptionsAreNamed() {
    valid().option("sink.paralelism", "2").sinkFails("sink.paralelism");
  }

  @Test
  void existingTableMustHaveTheSameColumns() throws Exception {
    publish(16, 2);
    new FactoryFixture(dir)
        .column("id", DataTypes.BIGINT())
        .column("name", DataTypes.INT())
        .primaryKey("id")
        .option("bucket", "16")
        .option("sink.parallelism", "2")
        .sinkFails("column 'name' is INT in the DDL but STRING in the table");
  }

  @Test
  void existingTableKeepsItsBucketCount() throws Exception {
    publish(16, 2);
    valid().sinkFails("Option 'bucket' is 4 but the table", "was written with 16 buckets");
  }

  @Test
  void existingTableMayChangeItsWriterCount() throws Exception {
    publish(4, 1);
    assertInstanceOf(CobbleDynamicTableSink.class, valid().sink());
  }

  private void publish(int buckets, int shards) throws Exception {
    try (Storage storage = StorageProviders.open(dir.toUri(), StorageOptions.empty())) {
      TableSchemaFile.of(valid().table().getResolvedSchema(), buckets, shards).publish(storage);
    }
  }
}
