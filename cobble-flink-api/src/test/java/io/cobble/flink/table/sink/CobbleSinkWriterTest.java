package io.cobble.flink.table.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.flink.shim.SinkWriterContext;
import io.cobble.flink.table.TableStorage;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.BucketRouter;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.metrics.groups.SinkWriterMetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.metrics.groups.InternalSinkWriterMetricGroup;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CobbleSinkWriterTest {

  private static final int BUCKETS = 4;
  private static final int SHARDS = 2;

  private static final RowType ROW_TYPE =
      RowType.of(
          new LogicalType[] {new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
          new String[] {"id", "name"});

  private static final RowCodec CODEC = new RowCodec(ROW_TYPE, new int[] {0});
  private static final TableLayout LAYOUT = new TableLayout(BUCKETS, SHARDS);

  @TempDir Path dir;

  private static TableSchemaFile schema(String... names) {
    return new TableSchemaFile(
        Arrays.asList(names),
        Arrays.asList(
            ROW_TYPE.getTypeAt(0).asSerializableString(),
            ROW_TYPE.getTypeAt(1).asSerializableString()),
        Collections.singletonList("id"),
        BUCKETS,
        SHARDS);
  }

  private CobbleSinkWriterFactory factory() {
    return new CobbleSinkWriterFactory(
        TableStorage.fromTableOptions(dir.toUri(), Collections.emptyMap()),
        schema("id", "name"),
        CODEC,
        1 << 20);
  }

  private static GenericRowData row(RowKind kind, long id, String name) {
    GenericRowData row = GenericRowData.of(id, StringData.fromString(name));
    row.setRowKind(kind);
    return row;
  }

  /** The first ids (from 1) whose buckets the given shard owns. */
  private static long[] idsOfShard(int shard, int count) {
    long[] ids = new long[count];
    int found = 0;
    for (long id = 1; found < count; id++) {
      if (LAYOUT.shardOf(bucketOf(id)) == shard) {
        ids[found++] = id;
      }
    }
    return ids;
  }

  private static int bucketOf(long id) {
    return BucketRouter.bucketOf(CODEC.key(row(RowKind.INSERT, id, "")), BUCKETS);
  }

  private static SinkWriterMetricGroup metrics() {
    return InternalSinkWriterMetricGroup.mock(new UnregisteredMetricsGroup());
  }

  @Test
  void upsertsDeletesIgnoresUpdateBeforeAndCounts() throws Exception {
    long[] ids = idsOfShard(0, 2);
    SinkWriterMetricGroup metrics = metrics();
    SinkWriter<RowData> writer = factory().createWriter(new SinkWriterContext(0, SHARDS, metrics));
    writer.write(row(RowKind.INSERT, ids[0], "a"), null);
    writer.write(row(RowKind.UPDATE_BEFORE, ids[0], "a"), null);
    writer.write(row(RowKind.UPDATE_AFTER, ids[0], "b"), null);
    writer.write(row(RowKind.INSERT, ids[1], "c"), null);
    writer.write(row(RowKind.DELETE, ids[1], "c"), null);
    writer.flush(true);
    writer.close();
    assertEquals(4, metrics.getNumRecordsSendCounter().getCount());
    assertTrue(metrics.getNumBytesSendCounter().getCount() > 0);

    Config config =
        Config.builder()
            .set("total-buckets", BUCKETS)
            .set("bucket-ranges", LAYOUT.bucketRanges(0))
            .build();
    try (Db db = Db.open(dir.resolve("shard-0"), config)) {
      byte[] key = CODEC.key(row(RowKind.INSERT, ids[0], ""));
      byte[][] columns = db.get(bucketOf(ids[0]), TableLayout.FAMILY, key);
      assertEquals(row(RowKind.INSERT, ids[0], "b"), CODEC.decode(key, columns));
      assertNull(
          db.get(bucketOf(ids[1]), TableLayout.FAMILY, CODEC.key(row(RowKind.INSERT, ids[1], ""))));
    }
    try (Storage storage = StorageProviders.open(dir.toUri(), StorageOptions.empty())) {
      assertEquals(schema("id", "name"), TableSchemaFile.read(storage).get());
    }
  }

  @Test
  void aRowOfAnotherWritersBucketIsRefused() throws Exception {
    long foreign = idsOfShard(1, 1)[0];
    SinkWriter<RowData> writer =
        factory().createWriter(new SinkWriterContext(0, SHARDS, metrics()));
    try {
      IllegalStateException e =
          assertThrows(
              IllegalStateException.class,
              () -> writer.write(row(RowKind.INSERT, foreign, "x"), null));
      assertTrue(e.getMessage().contains("which owns buckets 0-1"), e.getMessage());
    } finally {
      writer.close();
    }
  }

  @Test
  void aTableWrittenWithAnotherSchemaIsRefused() throws Exception {
    try (Storage storage = StorageProviders.open(dir.toUri(), StorageOptions.empty())) {
      schema("id", "title").publish(storage);
    }
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> factory().createWriter(new SinkWriterContext(1, SHARDS, metrics())));
    assertTrue(e.getMessage().contains("differs from this sink's"), e.getMessage());
  }

  @Test
  void aChangedWriterCountIsRefused() {
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> factory().createWriter(new SinkWriterContext(0, 3, metrics())));
    assertTrue(e.getMessage().contains("must not be changed"), e.getMessage());
  }

  @Test
  void everyValueColumnGetsACobbleColumn() throws Exception {
    factory().createWriter(new SinkWriterContext(1, SHARDS, metrics())).close();
    Config config =
        Config.builder()
            .set("total-buckets", BUCKETS)
            .set("bucket-ranges", LAYOUT.bucketRanges(1))
            .build();
    try (Db db = Db.open(dir.resolve("shard-1"), config)) {
      assertEquals(
          CODEC.valueColumnCount(), db.schema().requireFamily(TableLayout.FAMILY).columnCount());
    }
  }
}
