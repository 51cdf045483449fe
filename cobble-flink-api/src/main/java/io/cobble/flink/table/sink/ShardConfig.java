package io.cobble.flink.table.sink;

import io.cobble.Config;
import io.cobble.flink.table.layout.TableLayout;

/** The engine configuration of one sink shard. */
final class ShardConfig {

  /** The engine's bounds on {@code memtable.capacity}. */
  private static final long MIN_MEMTABLE = 4096;

  private static final long MAX_MEMTABLE = 1L << 30;

  /** Memtables a shard keeps in memory (active + one being flushed). */
  private static final int MEMTABLES = 2;

  private ShardConfig() {}

  /**
   * A shard owning its layout range, whose memtables together stay within the writer buffer. A
   * writer only writes, so it keeps no block cache, and one compaction thread per shard keeps
   * parallel writers in one TaskManager from oversubscribing its cores. The shard keeps only its
   * newest snapshot beyond those a global snapshot refers to or the writer pins (not yet
   * committed).
   */
  static Config of(TableLayout layout, int shard, long writerBufferBytes) {
    long memtable = Math.max(MIN_MEMTABLE, Math.min(MAX_MEMTABLE, writerBufferBytes / MEMTABLES));
    return Config.builder()
        .set("total-buckets", layout.bucketCount())
        .set("bucket-ranges", layout.bucketRanges(shard))
        .set("memtable.capacity", memtable)
        .set("memory.memtable-buffer-count", MEMTABLES)
        .set("block-cache.size", 0)
        .set("compaction.threads", 1)
        .set("snapshot.retention", 1)
        .build();
  }
}
