package io.cobble.flink.state;

import io.cobble.Config;
import io.cobble.EngineOptions;
import org.apache.flink.configuration.IllegalConfigurationException;

/** The one place where state-backend settings become engine options. */
final class EngineConfigMapping {
  /** The engine's smallest and largest memtable. */
  static final long MIN_MEMTABLE_BYTES = EngineOptions.MEMTABLE_CAPACITY.min();

  static final long MAX_MEMTABLE_BYTES = EngineOptions.MEMTABLE_CAPACITY.max();

  private EngineConfigMapping() {}

  static Config toEngineConfig(CobbleStateSettings s, long memoryBudgetBytes) {
    long memtableShare = (long) (memoryBudgetBytes * s.memtableBufferRatio());
    long memtable = Math.min(memtableShare / s.memtableBufferCount(), MAX_MEMTABLE_BYTES);
    if (memtable < MIN_MEMTABLE_BYTES) {
      throw new IllegalConfigurationException(
          "A Cobble memory budget of "
              + memoryBudgetBytes
              + " bytes leaves "
              + memtable
              + " bytes per memtable (budget × "
              + CobbleStateBackendOptions.MEMTABLE_BUFFER_RATIO.key()
              + " / "
              + CobbleStateBackendOptions.MEMTABLE_BUFFER_COUNT.key()
              + "); at least "
              + MIN_MEMTABLE_BYTES
              + " are needed. Give the backend more memory or lower the buffer count.");
    }
    long blockCache = memoryBudgetBytes - memtable * s.memtableBufferCount();
    Config.Builder b =
        Config.builder()
            .set(EngineOptions.MEMTABLE_CAPACITY.key(), memtable)
            .set(EngineOptions.MEMTABLE_BUFFER_COUNT.key(), s.memtableBufferCount())
            // As RocksDB's block cache holds what its write buffer manager leaves (with a slot's
            // pool, the pool lends instead).
            .set(EngineOptions.LEND_IDLE_MEMTABLE_BUFFERS.key(), true)
            .set(EngineOptions.BLOCK_CACHE_SIZE.key(), blockCache)
            .set(EngineOptions.MEMTABLE_TYPE.key(), s.memtableType())
            .set(EngineOptions.COMPACTION_POLICY.key(), s.compactionPolicy())
            .set(EngineOptions.L0_FILE_LIMIT.key(), s.l0FileLimit())
            .set(EngineOptions.COMPACTION_THREADS.key(), s.compactionThreads())
            .set(EngineOptions.READ_AHEAD_ENABLED.key(), s.readAheadEnabled())
            .set(EngineOptions.BLOOM_FILTER_ENABLED.key(), s.bloomFilterEnabled())
            .set(EngineOptions.BLOOM_BITS_PER_KEY.key(), s.bloomBitsPerKey())
            .set(EngineOptions.PARTITIONED_INDEX.key(), s.partitionedIndex())
            .set(
                EngineOptions.METADATA_CACHE_MODE.key(),
                s.metadataCacheMode().toLowerCase(java.util.Locale.ROOT))
            .set(EngineOptions.PINNED_METADATA_MAX_LEVEL.key(), s.pinnedMetadataMaxLevel())
            .set(EngineOptions.PIN_PARTITIONS.key(), s.pinnedPartitions())
            .set(EngineOptions.VALUE_SEPARATION_THRESHOLD.key(), s.valueSeparationThreshold())
            // List state grows by appends: a separated list would be read back from the value log
            // and written there again by every compaction that folds a new batch onto it.
            .set(EngineOptions.VALUE_SEPARATION_MERGE_FAMILIES.key(), false)
            // Lists are rewritten by every flush and compaction that folds a batch onto them, and
            // compress several-fold; point-read families stay raw above L2, where a block-cache
            // miss would otherwise also decompress a block.
            .set(EngineOptions.COMPRESSION_MERGE_FAMILIES.key(), "lz4")
            // A list appended in batches repeats them: 32-KB blocks hold eight times the repeats of
            // 4-KB ones to compress against, and the LZ4 encoder clears its 16-KB hash table once
            // per block, which at 16-KB blocks was an eighth of a list compaction's CPU.
            .set(EngineOptions.BLOCK_SIZE_MERGE_FAMILIES.key(), "32kb")
            .set(EngineOptions.DIRECT_IO_BUFFER_SIZE.key(), s.directIoBufferSize())
            .set(EngineOptions.DIRECT_IO_POOL_MAX_SIZE.key(), s.directIoPoolMaxSize())
            // The shard's durable copy is the checkpoint: a flush need not fsync its working
            // files, the snapshot fsyncs those it hands over in place (restore never reads the
            // working directory).
            .set(EngineOptions.FSYNC_POLICY.key(), "snapshot");
    if (s.writeStallLimit() > 0) {
      b.set(EngineOptions.WRITE_STALL_LIMIT.key(), s.writeStallLimit());
    }
    return b.build();
  }
}
