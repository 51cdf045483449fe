package io.cobble.flink.state;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

/**
 * Options of the Cobble state backend, all under {@code state.backend.cobble.}. They are read from
 * the cluster configuration when the backend factory runs and may be overridden per job (see {@link
 * CobbleStateSettings#fromConfig(org.apache.flink.configuration.ReadableConfig,
 * org.apache.flink.configuration.ReadableConfig)}). Enumerated values are plain strings so that
 * every key is parsed case-insensitively with one error format; {@link CobbleStateSettings}
 * validates them all.
 */
public final class CobbleStateBackendOptions {
  static final String PREFIX = "state.backend.cobble.";

  public static final ConfigOption<String> LOCAL_DIRECTORIES =
      ConfigOptions.key(PREFIX + "localdir")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Absolute local directories for Cobble's working files, separated by ',' or the"
                  + " platform path separator; each backend picks one. Unset: the TaskManager's"
                  + " temporary directories (io.tmp.dirs).");

  public static final ConfigOption<Boolean> LOCAL_PRIMARY_HIGH_PRIORITY =
      ConfigOptions.key(PREFIX + "localdir.primary-high-priority")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Whether the local directory is the fast tier where live state is written first;"
                  + " the checkpoint storage then holds snapshots and serves as the slow tier."
                  + " False: state files are written to the checkpoint storage directly, so a"
                  + " checkpoint uploads nothing.");

  public static final ConfigOption<String> TIMER_SERVICE =
      ConfigOptions.key(PREFIX + "timer-service.factory")
          .stringType()
          .defaultValue(TimerServiceKind.COBBLE.name())
          .withDescription(
              "Where timers are stored: COBBLE (in the backend, per key group) or HEAP (on the"
                  + " JVM heap).");

  public static final ConfigOption<Boolean> MEMORY_MANAGED =
      ConfigOptions.key(PREFIX + "memory.managed")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Whether the memory budget of a backend is the state-backend share of the slot's"
                  + " Flink managed memory, reserved from the slot's memory manager and shared by"
                  + " the slot's Cobble backends. False without memory.fixed-per-slot: a fixed 128"
                  + " MB per backend.");

  public static final ConfigOption<MemorySize> MEMORY_FIXED_PER_SLOT =
      ConfigOptions.key(PREFIX + "memory.fixed-per-slot")
          .memoryType()
          .noDefaultValue()
          .withDescription(
              "A fixed memory budget per slot; when set it replaces the managed-memory share.");

  public static final ConfigOption<Double> MEMTABLE_BUFFER_RATIO =
      ConfigOptions.key(PREFIX + "memory.memtable-buffer-ratio")
          .doubleType()
          .defaultValue(0.5)
          .withDescription(
              "Share of the memory budget given to memtables (0 < ratio < 1); the rest is the"
                  + " block cache.");

  public static final ConfigOption<Integer> MEMTABLE_BUFFER_COUNT =
      ConfigOptions.key(PREFIX + "memory.memtable-buffer-count")
          .intType()
          .defaultValue(2)
          .withDescription(
              "Memtables held in memory (the active one and those waiting to be flushed); the"
                  + " memtable share of the budget is split evenly between them. 2 to 64.");

  public static final ConfigOption<String> MEMTABLE_TYPE =
      ConfigOptions.key(PREFIX + "memtable.type")
          .stringType()
          .defaultValue("adaptive")
          .withDescription(
              "Memtable structure: skiplist (point reads and scans), hash (point reads only), vec"
                  + " (write-heavy) or adaptive (switches between them by observed access).");

  public static final ConfigOption<String> COMPACTION_POLICY =
      ConfigOptions.key(PREFIX + "compaction.policy")
          .stringType()
          .defaultValue("score_priority")
          .withDescription(
              "How the next compaction is chosen: round_robin, min_overlap or score_priority.");

  public static final ConfigOption<Integer> COMPACTION_L0_FILE_LIMIT =
      ConfigOptions.key(PREFIX + "compaction.l0-file-limit")
          .intType()
          .defaultValue(2)
          .withDescription(
              "Level-0 files that start a compaction (1 to 1000). More files mean less"
                  + " compaction work but slower reads and scans.");

  public static final ConfigOption<Integer> COMPACTION_WRITE_STALL_LIMIT =
      ConfigOptions.key(PREFIX + "compaction.write-stall-limit")
          .intType()
          .noDefaultValue()
          .withDescription(
              "Immutable memtables plus level-0 files above which writes wait for compaction;"
                  + " at least compaction.l0-file-limit + 2. Unset: max(l0-file-limit + 2, 32).");

  public static final ConfigOption<Boolean> COMPACTION_READ_AHEAD =
      ConfigOptions.key(PREFIX + "compaction.read-ahead.enabled")
          .booleanType()
          .defaultValue(true)
          .withDescription("Whether compaction reads its input files in large sequential chunks.");

  public static final ConfigOption<String> COMPACTION_MODE =
      ConfigOptions.key(PREFIX + "compaction.mode")
          .stringType()
          .defaultValue("LOCAL")
          .withDescription(
              "Where compaction runs: LOCAL (in the TaskManager), REMOTE (a compactor service) or"
                  + " DEDICATED (a compaction job through shared storage). Only LOCAL is"
                  + " available in this release.");

  public static final ConfigOption<String> COMPACTION_REMOTE_ADDRESS =
      ConfigOptions.key(PREFIX + "compaction.remote.addr")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "host:port of a remote compactor; needed by REMOTE mode, and selects REMOTE mode"
                  + " when compaction.mode is not set. Not available in this release.");

  public static final ConfigOption<Duration> COMPACTION_REMOTE_TIMEOUT =
      ConfigOptions.key(PREFIX + "compaction.remote.timeout")
          .durationType()
          .defaultValue(Duration.ofSeconds(300))
          .withDescription("Longest wait for one remote compaction request (REMOTE mode).");

  public static final ConfigOption<Integer> COMPACTION_THREADS =
      ConfigOptions.key(PREFIX + "compaction.threads")
          .intType()
          .defaultValue(4)
          .withDescription(
              "Compaction threads in the TaskManager (1 to 256). In REMOTE mode they submit"
                  + " requests; the compactor has its own pool.");

  public static final ConfigOption<Duration> COMPACTION_DEDICATED_POLL_INTERVAL =
      ConfigOptions.key(PREFIX + "compaction.dedicated.poll-interval")
          .durationType()
          .defaultValue(Duration.ofSeconds(1))
          .withDescription(
              "How often a TaskManager looks for results of the dedicated compaction job.");

  public static final ConfigOption<Duration> COMPACTION_DEDICATED_ORPHAN_MIN_AGE =
      ConfigOptions.key(PREFIX + "compaction.dedicated.orphan-min-age")
          .durationType()
          .defaultValue(Duration.ofMinutes(5))
          .withDescription(
              "Age after which unused output of the dedicated compaction job may be deleted.");

  public static final ConfigOption<Integer> ASYNC_READ_THREADS =
      ConfigOptions.key(PREFIX + "async.read-threads")
          .intType()
          .defaultValue(4)
          .withDescription(
              "Threads serving asynchronous state reads (Flink 2.x async state; 1 to 256).");

  public static final ConfigOption<Integer> ASYNC_WRITE_THREADS =
      ConfigOptions.key(PREFIX + "async.write-threads")
          .intType()
          .defaultValue(1)
          .withDescription(
              "Threads serving asynchronous state writes (Flink 2.x async state; 1 to 256).");

  public static final ConfigOption<Boolean> BLOOM_FILTER_ENABLED =
      ConfigOptions.key(PREFIX + "sst.bloom-filter.enabled")
          .booleanType()
          .defaultValue(true)
          .withDescription("Whether table files carry bloom filters for point reads.");

  public static final ConfigOption<Integer> BLOOM_FILTER_BITS_PER_KEY =
      ConfigOptions.key(PREFIX + "sst.bloom-filter.bits-per-key")
          .intType()
          .defaultValue(10)
          .withDescription("Bloom filter bits per key (1 to 64); 10 gives about 1 % false hits.");

  public static final ConfigOption<Boolean> PARTITIONED_INDEX_ENABLED =
      ConfigOptions.key(PREFIX + "sst.partitioned-index.enabled")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Whether large index and filter blocks are split into partitions under a small"
                  + " top-level index.");

  public static final ConfigOption<String> READ_METADATA_CACHE_MODE =
      ConfigOptions.key(PREFIX + "sst.read-metadata-cache.mode")
          .stringType()
          .defaultValue("EAGER")
          .withDescription(
              "When decoded table metadata is cached: EAGER (as a file is written or opened),"
                  + " LAZY (at its first read) or OFF (decoded again by every reader).");

  public static final ConfigOption<Integer> PINNED_METADATA_MAX_LEVEL =
      ConfigOptions.key(PREFIX + "sst.pinned-metadata.max-level")
          .intType()
          .defaultValue(2)
          .withDescription(
              "Deepest level whose top-level index and filter stay in memory outside the block"
                  + " cache: -1 none, 0 only L0, N levels L0 to LN (at most 6).");

  public static final ConfigOption<Boolean> PINNED_METADATA_PARTITIONS =
      ConfigOptions.key(PREFIX + "sst.pinned-metadata.partitions.enabled")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Whether the index and filter partitions of pinned files are pinned as well; false"
                  + " saves memory and costs point-read speed.");

  public static final ConfigOption<MemorySize> VALUE_SEPARATION_THRESHOLD =
      ConfigOptions.key(PREFIX + "value-separation.threshold")
          .memoryType()
          .defaultValue(MemorySize.parse("1kb"))
          .withDescription(
              "Values larger than this are stored in the value log instead of the table files;"
                  + " 0 turns separation off (at most 1 GB).");

  public static final ConfigOption<Boolean> VLOG_LOW_PRIORITY_PRIMARY =
      ConfigOptions.key(PREFIX + "vlog.low-priority-primary.enabled")
          .booleanType()
          .defaultValue(false)
          .withDescription(
              "Whether new value-log files are placed on the slowest tier (the checkpoint"
                  + " storage) instead of the local directory; writes fail when that tier is"
                  + " unavailable.");

  public static final ConfigOption<MemorySize> DIRECT_IO_BUFFER_SIZE =
      ConfigOptions.key(PREFIX + "direct-io.buffer-size")
          .memoryType()
          .defaultValue(MemorySize.parse("2kb"))
          .withDescription("Size of one pooled read buffer for direct I/O (512 bytes to 64 MB).");

  public static final ConfigOption<Integer> DIRECT_IO_POOL_MAX_SIZE =
      ConfigOptions.key(PREFIX + "direct-io.pool-max-size")
          .intType()
          .defaultValue(64)
          .withDescription("Pooled direct I/O read buffers kept for reuse (0 to 100000).");

  public static final ConfigOption<MemorySize> LOG_MAX_FILE_SIZE =
      ConfigOptions.key(PREFIX + "log.max-file-size")
          .memoryType()
          .defaultValue(MemorySize.parse("10mb"))
          .withDescription(
              "Accepted for compatibility and validated (at least 1 KB); Cobble logs into the"
                  + " TaskManager log, which Flink's logging configuration rolls.");

  public static final ConfigOption<Integer> LOG_KEEP_FILES =
      ConfigOptions.key(PREFIX + "log.keep-files")
          .intType()
          .defaultValue(3)
          .withDescription(
              "Accepted for compatibility and validated (at least 1); Cobble logs into the"
                  + " TaskManager log, whose retention Flink's logging configuration sets.");

  public static final ConfigOption<String> LOG_LEVEL =
      ConfigOptions.key(PREFIX + "log.level")
          .stringType()
          .defaultValue("info")
          .withDescription(
              "Accepted for compatibility and validated (trace, debug, info, warn, error or off);"
                  + " Cobble logs through SLF4J into the TaskManager log, so the level of logger"
                  + " io.cobble is set in Flink's logging configuration.");

  public static final ConfigOption<Integer> SNAPSHOT_RETENTION =
      ConfigOptions.key(PREFIX + "snapshot.retention")
          .intType()
          .noDefaultValue()
          .withDescription(
              "Not supported by the state backend; setting it fails at backend creation. Flink"
                  + " decides which checkpoints are retained (state.checkpoints.num-retained, on"
                  + " 1.20+ execution.checkpointing.num-retained) and Cobble's files live exactly"
                  + " as long as a retained checkpoint references them.");

  /** Every option above, in declaration order. */
  public static List<ConfigOption<?>> all() {
    return ALL;
  }

  private static final List<ConfigOption<?>> ALL =
      Collections.unmodifiableList(
          Arrays.asList(
              LOCAL_DIRECTORIES,
              LOCAL_PRIMARY_HIGH_PRIORITY,
              TIMER_SERVICE,
              MEMORY_MANAGED,
              MEMORY_FIXED_PER_SLOT,
              MEMTABLE_BUFFER_RATIO,
              MEMTABLE_BUFFER_COUNT,
              MEMTABLE_TYPE,
              COMPACTION_POLICY,
              COMPACTION_L0_FILE_LIMIT,
              COMPACTION_WRITE_STALL_LIMIT,
              COMPACTION_READ_AHEAD,
              COMPACTION_MODE,
              COMPACTION_REMOTE_ADDRESS,
              COMPACTION_REMOTE_TIMEOUT,
              COMPACTION_THREADS,
              COMPACTION_DEDICATED_POLL_INTERVAL,
              COMPACTION_DEDICATED_ORPHAN_MIN_AGE,
              ASYNC_READ_THREADS,
              ASYNC_WRITE_THREADS,
              BLOOM_FILTER_ENABLED,
              BLOOM_FILTER_BITS_PER_KEY,
              PARTITIONED_INDEX_ENABLED,
              READ_METADATA_CACHE_MODE,
              PINNED_METADATA_MAX_LEVEL,
              PINNED_METADATA_PARTITIONS,
              VALUE_SEPARATION_THRESHOLD,
              VLOG_LOW_PRIORITY_PRIMARY,
              DIRECT_IO_BUFFER_SIZE,
              DIRECT_IO_POOL_MAX_SIZE,
              LOG_MAX_FILE_SIZE,
              LOG_KEEP_FILES,
              LOG_LEVEL,
              SNAPSHOT_RETENTION));

  private CobbleStateBackendOptions() {}
}
