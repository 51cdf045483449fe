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
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
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
  void upsertsDeletesAndCountsOneWritePerBeforeAfterPair() {
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
  void aLoneUpdateBeforeRemovesTheRowAtTheNextSnapshot() {
    long[] ids = idsOfShard(LAYOUT, 0, 2);
    CountingGroup metrics = new CountingGroup();
    try (Db db = openShard(dir, 0)) {
      ShardWriter writer = new ShardWriter(db, 0, LAYOUT, CODEC, metrics);
      writer.write(row(RowKind.INSERT, ids[0], "a"));
      writer.write(row(RowKind.INSERT, ids[1], "b"));
      // The filtered aggregate's case: the row leaves the result, no UPDATE_AFTER follows.
      writer.write(row(RowKind.UPDATE_BEFORE, ids[0], "a"));
      writer.flush();
      assertNull(stored(db, ids[0]));
      assertEquals(row(RowKind.INSERT, ids[1], "b"), stored(db, ids[1]));
      assertEquals(3, metrics.records.getCount());
      // A held removal is written before a row of another key, which may be a snapshot's last.
      writer.write(row(RowKind.UPDATE_BEFORE, ids[1], "b"));
      writer.write(row(RowKind.UPDATE_AFTER, ids[0], "c"));
      assertNull(stored(db, ids[1]));
      assertEquals(row(RowKind.INSERT, ids[0], "c"), stored(db, ids[0]));
      assertEquals(5, metrics.records.getCount());
      // A removal followed by the same key's DELETE is one write.
      writer.write(row(RowKind.UPDATE_BEFORE, ids[0], "c"));
      writer.write(row(RowKind.DELETE, ids[0], "c"));
      writer.flush();
      assertNull(stored(db, ids[0]));
      assertEquals(6, metrics.records.getCount());
    }
  }

  /**
   * The pair of one key writes exactly what the UPDATE_AFTER alone writes: the memtable of a shard
   * fed INSERT, UPDATE_BEFORE, UPDATE_AFTER holds as many bytes as one fed INSERT, UPDATE_AFTER, so
   * the removal was never written (a tombstone would add its own entry bytes).
   */
  @Test
  void aBeforeAfterPairOfOneKeyCostsOneWrite() {
    long id = idsOfShard(LAYOUT, 0, 1)[0];
    long withPair;
    try (Db db = openShard(dir.resolve("pair"), 0)) {
      ShardWriter writer = new ShardWriter(db, 0, LAYOUT, CODEC, new CountingGroup());
      writer.write(row(RowKind.INSERT, id, "a"));
      writer.write(row(RowKind.UPDATE_BEFORE, id, "a"));
      writer.write(row(RowKind.UPDATE_AFTER, id, "b"));
      writer.flush();
      withPair = db.metrics().memtableBytes();
    }
    long afterOnly;
    try (Db db = openShard(dir.resolve("after-only"), 0)) {
      ShardWriter writer = new ShardWriter(db, 0, LAYOUT, CODEC, new CountingGroup());
      writer.write(row(RowKind.INSERT, id, "a"));
      writer.write(row(RowKind.UPDATE_AFTER, id, "b"));
      afterOnly = db.metrics().memtableBytes();
    }
    // What a sink that writes the removal and then the row leaves behind.
    long removalThenRow;
    try (Db db = openShard(dir.resolve("removal"), 0)) {
      ShardWriter writer = new ShardWriter(db, 0, LAYOUT, CODEC, new CountingGroup());
      writer.write(row(RowKind.INSERT, id, "a"));
      writer.write(row(RowKind.DELETE, id, "a"));
      writer.write(row(RowKind.UPDATE_AFTER, id, "b"));
      removalThenRow = db.metrics().memtableBytes();
    }
    assertTrue(removalThenRow > afterOnly, removalThenRow + " <= " + afterOnly);
    assertEquals(afterOnly, withPair);
  }

  /**
   * Random changelogs over a few keys against a model where UPDATE_BEFORE and DELETE remove the key
   * and INSERT and UPDATE_AFTER set it; the shard is compared after every flush. Replay a seed with
   * {@code -Dcobble.sink-writer-model.seed=<seed>}.
   */
  @Test
  void randomChangelogsMatchTheRemovalModel() {
    long seed = Long.getLong("cobble.sink-writer-model.seed", System.nanoTime());
    Random random = new Random(seed);
    long[] ids = idsOfShard(LAYOUT, 0, 5);
    Map<Long, String> model = new HashMap<>();
    RowKind[] kinds = RowKind.values();
    try (Db db = openShard(dir, 0)) {
      ShardWriter writer = new ShardWriter(db, 0, LAYOUT, CODEC, new CountingGroup());
      for (int step = 0; step < 5_000; step++) {
        long id = ids[random.nextInt(ids.length)];
        RowKind kind = kinds[random.nextInt(kinds.length)];
        String name = "v" + step;
        writer.write(row(kind, id, name));
        if (kind == RowKind.INSERT || kind == RowKind.UPDATE_AFTER) {
          model.put(id, name);
        } else {
          model.remove(id);
        }
        if (random.nextInt(50) == 0) {
          writer.flush();
          for (long key : ids) {
            GenericRowData expected =
                model.containsKey(key) ? row(RowKind.INSERT, key, model.get(key)) : null;
            assertEquals(
                expected, stored(db, key), "key " + key + " at step " + step + ", seed " + seed);
          }
        }
      }
    }
  }

  private static Object stored(Db db, long id) {
    byte[] key = CODEC.key(row(RowKind.INSERT, id, ""));
    byte[][] columns = db.get(bucketOf(id), TableLayout.FAMILY, key);
    return columns == null ? null : CODEC.decode(key, columns);
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

  /**
   * With buckets that do not split evenly (7 over 3 writers: ranges of 2, 2 and 3), each writer
   * takes exactly the rows of the buckets {@link TableLayout#shardOf} gives it, boundary buckets
   * included, and refuses every other row.
   */
  @Test
  void eachWriterTakesExactlyItsBucketsWhenTheyDoNotSplitEvenly() {
    TableLayout uneven = new TableLayout(7, 3);
    for (int shard = 0; shard < 3; shard++) {
      try (Db db = Db.open(dir.resolve("shard-" + shard), ShardConfig.of(uneven, shard, 1 << 20))) {
        ShardWriter writer = new ShardWriter(db, shard, uneven, CODEC, new CountingGroup());
        boolean[] seen = new boolean[7];
        for (long id = 1; id <= 200; id++) {
          int bucket = BucketRouter.bucketOf(CODEC.key(row(RowKind.INSERT, id, "")), 7);
          seen[bucket] = true;
          GenericRowData row = row(RowKind.INSERT, id, "n" + id);
          if (uneven.shardOf(bucket) == shard) {
            writer.write(row);
          } else {
            assertThrows(
                IllegalStateException.class,
                () -> writer.write(row),
                "bucket " + bucket + " of id " + id + " reached writer " + shard);
          }
        }
        for (int b = 0; b < 7; b++) {
          assertTrue(seen[b], "no id of bucket " + b + " among the first 200");
        }
      }
    }
  }

  @Test
  void shardConfigKeepsOneUnpinnedSnapshot() {
    Config config = ShardConfig.of(LAYOUT, 1, 1 << 20);
    assertEquals(1, config.snapshotRetention());
    assertEquals(BUCKETS, config.totalBuckets());
  }
}
