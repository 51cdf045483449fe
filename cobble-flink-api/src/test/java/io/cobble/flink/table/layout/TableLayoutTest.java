package io.cobble.flink.table.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TableLayoutTest {

  @Test
  void shardsOwnContiguousRangesCoveringEveryBucket() {
    for (int buckets = 1; buckets <= 70; buckets++) {
      for (int shards = 1; shards <= buckets; shards++) {
        TableLayout layout = new TableLayout(buckets, shards);
        assertEquals(0, layout.firstBucket(0));
        assertEquals(buckets, layout.endBucket(shards - 1));
        for (int shard = 0; shard < shards; shard++) {
          assertTrue(layout.firstBucket(shard) < layout.endBucket(shard), "empty shard");
          for (int b = layout.firstBucket(shard); b < layout.endBucket(shard); b++) {
            assertEquals(shard, layout.shardOf(b), buckets + "/" + shards + " bucket " + b);
          }
        }
      }
    }
  }

  @Test
  void formulaAndEngineSyntax() {
    TableLayout layout = new TableLayout(16, 3);
    assertEquals("0-4", layout.bucketRanges(0));
    assertEquals("5-9", layout.bucketRanges(1));
    assertEquals("10-15", layout.bucketRanges(2));
  }

  @Test
  void rejectsMoreShardsThanBuckets() {
    assertThrows(IllegalArgumentException.class, () -> new TableLayout(2, 3));
  }
}
