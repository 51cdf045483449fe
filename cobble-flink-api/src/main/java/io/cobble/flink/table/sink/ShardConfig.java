package io.cobble.flink.table.sink;

import io.cobble.Config;
import io.cobble.EngineOptions;
import io.cobble.FsyncPolicy;
import io.cobble.flink.table.layout.TableLayout;

/** The engine configuration of one sink shard. */
final class ShardConfig {

  /** Memtables a shard keeps in memory (active + one being flushed). */
  private static final int MEMTABLES = 2;

  /**
   * L0 files that start an L0 merge. Upserts spread over the whole key range, so every L0 file
   * overlaps all of L1 and each L0 merge rewrites L1, whose size grows with the table: waiting for
   * four files instead of the engine's two halves that rewriting. A writer does not read, and the
   * end of input merges L0 anyway ({@code sink.compact-at-end-of-input}); a reader of a table being
   * written probes up to four L0 files (Paimon's default merges at five sorted runs).
   */
  static final int L0_FILE_LIMIT = 4;

  /**
   * Entries per restart group of a data block, half the engine's 16: a lookup's point read scans
   * its group after the restart search, so it passes about four entries instead of eight, for 0.6 %
   * more table bytes. Readers keep a sink table's blocks in their cache, so the extra bytes cost no
   * misses there (unlike a state backend's larger-than-cache tables).
   */
  static final int RESTART_INTERVAL = 8;

  private ShardConfig() {}

  /**
   * A shard owning its layout range, whose memtables together stay within the writer buffer. A
   * writer only writes, so it keeps no block cache, and one compaction thread per shard keeps
   * parallel writers in one TaskManager from oversubscribing its cores. The shard keeps only its
   * newest snapshot beyond those a global snapshot refers to or the writer pins (not yet
   * committed). A shard restarts only from snapshots, never from its working directory, so its
   * flushes and compactions need not fsync: a snapshot fsyncs the files it links or copies, and the
   * many level-0 files merged away between two checkpoints are never synced at all.
   */
  static Config of(TableLayout layout, int shard, long writerBufferBytes) {
    long memtable =
        Math.max(
            EngineOptions.MEMTABLE_CAPACITY.min(),
            Math.min(EngineOptions.MEMTABLE_CAPACITY.max(), writerBufferBytes / MEMTABLES));
    return Config.builder()
        .set(EngineOptions.TOTAL_BUCKETS, layout.bucketCount())
        .set(EngineOptions.BUCKET_RANGES, layout.bucketRanges(shard))
        .set(EngineOptions.MEMTABLE_CAPACITY, memtable)
        .set(EngineOptions.MEMTABLE_BUFFER_COUNT, MEMTABLES)
        .set(EngineOptions.BLOCK_CACHE_SIZE, 0L)
        .set(EngineOptions.COMPACTION_THREADS, 1)
        .set(EngineOptions.L0_FILE_LIMIT, L0_FILE_LIMIT)
        .set(EngineOptions.SNAPSHOT_RETENTION, 1)
        .set(EngineOptions.FSYNC_POLICY, FsyncPolicy.SNAPSHOT)
        .set(EngineOptions.BLOCK_RESTART_INTERVAL, RESTART_INTERVAL)
        .build();
  }
}
