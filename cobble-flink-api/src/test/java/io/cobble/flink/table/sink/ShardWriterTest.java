package io.cobble.flink.table.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.BucketRouter;
import io.cobble.flink.table.layout.TableLayout;
import java.nio.file.Path;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShardWriterTest {

  static final int BUCKETS = 4;
  static final int SHARDS = 2;

  static final RowType ROW_TYPE =
      RowType.of(
          new LogicalType[] {new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
          new String[] {"id", "name"});

  static final RowCodec CODEC = new RowCodec(ROW_TYPE, new int[] {0});
  static final TableLayout LAYOUT = new TableLayout(BUCKETS, SHARDS);

  @TempDir Path dir;

  static GenericRowData row(RowKind kind, long id, String name) {
    GenericRowData row = GenericRowData.of(id, StringData.fromString(name));
    row.setRowKind(kind);
    return row;
  }

  /** The first ids (from 1) whose buckets the given shard owns. */
  static long[] idsOfShard(TableLayout layout, int shard, int count) {
    long[] ids = new long[count];
    int found = 0;
    for (long id = 1; found < count; id++) {
      if (layout.shardOf(bucketOf(id)) == shard) {
        ids[found++] = id;
      }
    }
    return ids;
  }

  static int bucketOf(long id) {
    return BucketRouter.bucketOf(CODEC.key(row(RowKind.INSERT, id, "")), BUCKETS);
  }

  static Db openShard(Path dir, int shard) {
    return Db.open(dir, ShardConfig.of(LAYOUT, shard, 1 << 20));
  }

  /** Counters that count, in a group that registers nothing. */
  private static final class CountingGroup extends UnregisteredMetricsGroup {
    final SimpleCounter records = new SimpleCounter();
    final SimpleCounter bytes = new SimpleCounter();

    @Override
    public Counter counter(String name) {
      return name.equals("numRecordsSend") ? records : bytes;
    }

    @Override
    public MetricGroup addGroup(String name) {
      return new UnregisteredMetricsGroup();
    }
  }

  @Test
  void upsertsDeletesIgnoresUpdateBeforeAndCounts() {
    long[] ids = idsOfShard(LAYOUT, 0, 2);
    CountingGroup metrics = new CountingGroup();
    try (Db db = openShard(dir, 0)) {
      ShardWriter writer = new ShardWriter(db, 0, LAYOUT, CODEC, metrics);
      writer.write(row(RowKind.INSERT, ids[0], "a"));
      writer.write(row(RowKind.UPDATE_BEFORE, ids[0], "a"));
      writer.write(row(RowKind.UPDATE_AFTER, ids[0], "b"));
      writer.write(row(RowKind.INSERT, ids[1], "c"));
      writer.write(row(RowKind.DELETE, ids[1], "c"));
      assertEquals(4, metrics.records.getCount());
      assertTrue(metrics.bytes.getCount() > 0);
      byte[] key = CODEC.key(row(RowKind.INSERT, ids[0], ""));
      assertEquals(
          row(RowKind.INSERT, ids[0], "b"),
          CODEC.decode(key, db.get(bucketOf(ids[0]), TableLayout.FAMILY, key)));
      assertNull(
          db.get(bucketOf(ids[1]), TableLayout.FAMILY, CODEC.key(row(RowKind.INSERT, ids[1], ""))));
    }
  }

  @Test
  void aRowOfAnotherWritersBucketIsRefused() {
    long foreign = idsOfShard(LAYOUT, 1, 1)[0];
    try (Db db = openShard(dir, 0)) {
      ShardWriter writer = new ShardWriter(db, 0, LAYOUT, CODEC, new CountingGroup());
      IllegalStateException e =
          assertThrows(
              IllegalStateException.class, () -> writer.write(row(RowKind.INSERT, foreign, "x")));
      assertTrue(e.getMessage().contains("which owns buckets 0-1"), e.getMessage());
    }
  }

  @Test
  void shardConfigKeepsOneUnpinnedSnapshot() {
    Config config = ShardConfig.of(LAYOUT, 1, 1 << 20);
    assertEquals(1, config.snapshotRetention());
    assertEquals(BUCKETS, config.totalBuckets());
  }
}
