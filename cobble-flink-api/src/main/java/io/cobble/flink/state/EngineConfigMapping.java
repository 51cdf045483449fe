package io.cobble.flink.state;

import io.cobble.Config;
import org.apache.flink.configuration.IllegalConfigurationException;

/**
 * The one place where state-backend settings become engine keys, so that the engine's option
 * definitions can replace the string keys here without touching anything else.
 */
final class EngineConfigMapping {
  /** The engine's smallest and largest memtable. */
  static final long MIN_MEMTABLE_BYTES = 4096;

  static final long MAX_MEMTABLE_BYTES = 1L << 30;

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
            .set("memtable.capacity", memtable)
            .set("memory.memtable-buffer-count", s.memtableBufferCount())
            .set("block-cache.size", blockCache)
            .set("memtable.type", s.memtableType())
            .set("compaction.policy", s.compactionPolicy())
            .set("compaction.l0-file-limit", s.l0FileLimit())
            .set("compaction.threads", s.compactionThreads())
            .set("compaction.read-ahead.enabled", s.readAheadEnabled())
            .set("sst.bloom-filter.enabled", s.bloomFilterEnabled())
            .set("sst.bloom-filter.bits-per-key", s.bloomBitsPerKey())
            .set("sst.partitioned-index.enabled", s.partitionedIndex())
            .set(
                "sst.read-metadata-cache.mode",
                s.metadataCacheMode().toLowerCase(java.util.Locale.ROOT))
            .set("sst.pinned-metadata.max-level", s.pinnedMetadataMaxLevel())
            .set("sst.pinned-metadata.partitions.enabled", s.pinnedPartitions())
            .set("value-separation.threshold", s.valueSeparationThreshold())
            .set("direct-io.buffer-size", s.directIoBufferSize())
            .set("direct-io.pool-max-size", s.directIoPoolMaxSize())
            .set("snapshot.retention", s.snapshotRetention());
    if (s.writeStallLimit() > 0) {
      b.set("compaction.write-stall-limit", s.writeStallLimit());
    }
    return b.build();
  }
}
