package io.cobble;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Every engine configuration key, declared once. {@link Config} parses and validates through these
 * definitions, the README's "Engine configuration" table is {@link #markdownTable()} (a test keeps
 * the two equal), and integrations refer to them instead of key strings: the SQL sink as {@code
 * EngineOptions.BLOCK_CACHE_SIZE.key()}, the state backend under {@code state.backend.cobble.<key>}
 * through {@link #all()} and {@link Config#fromPrefixed}.
 */
public final class EngineOptions {

  public static final EngineOption<Integer> TOTAL_BUCKETS =
      EngineOption.integer(
          "total-buckets", 1, 1, 65536, "Buckets of the key space, fixed when the DB is created.");

  public static final EngineOption<String> BUCKET_RANGES =
      EngineOption.text(
          "bucket-ranges",
          "all",
          "all, or ascending disjoint lo-hi or n below total-buckets, comma-separated",
          "Inclusive bucket ranges this shard owns, e.g. 0-127,256-300.");

  public static final EngineOption<MemTableType> MEMTABLE_TYPE =
      EngineOption.enumeration(
          "memtable.type",
          MemTableType.class,
          MemTableType.ADAPTIVE,
          "Memtable implementation: skiplist (point reads and scans), hash (fastest point reads),"
              + " vec (fastest writes) or adaptive (picks one per memtable from the observed"
              + " operation mix).");

  public static final EngineOption<Long> MEMTABLE_CAPACITY =
      EngineOption.size(
          "memtable.capacity",
          "32mb",
          4096,
          1L << 30,
          "Bytes one memtable holds before it is sealed and flushed.");

  public static final EngineOption<Integer> MEMTABLE_BUFFER_COUNT =
      EngineOption.integer(
          "memory.memtable-buffer-count",
          2,
          2,
          64,
          "Memtables in memory (active + immutable); memory is bounded by capacity × count and"
              + " writes wait while all are full.");

  public static final EngineOption<Boolean> LEND_IDLE_MEMTABLE_BUFFERS =
      EngineOption.bool(
          "memory.lend-idle-memtable-buffers",
          false,
          "Let the block cache use what the memtables leave of their buffers (memtable.capacity ×"
              + " memory.memtable-buffer-count, less the active and sealed memtables and one"
              + " sixteenth of headroom), taken back a sixteenth at a time as the active memtable"
              + " grows and when a memtable is sealed, so a Db that is read more than written caches"
              + " in its whole memory. No effect when block-cache.size is 0 or the Db shares a"
              + " memory pool (a pool lends its idle write budget itself). The Flink state backend"
              + " turns it on.");

  public static final EngineOption<CompactionPolicy> COMPACTION_POLICY =
      EngineOption.enumeration(
          "compaction.policy",
          CompactionPolicy.class,
          CompactionPolicy.SCORE_PRIORITY,
          "How the input of a leveled compaction is chosen.");

  public static final EngineOption<Integer> L0_FILE_LIMIT =
      EngineOption.integer(
          "compaction.l0-file-limit",
          2,
          1,
          1000,
          "L0 files of a tree that trigger an L0 compaction.");

  public static final EngineOption<Integer> WRITE_STALL_LIMIT =
      EngineOption.integer(
          "compaction.write-stall-limit",
          EngineOption.DERIVED,
          "max(l0-file-limit + 2, 32)",
          "l0-file-limit + 2..100000",
          3,
          100_000,
          "Writes wait while immutable memtables + L0 files of any tree exceed this.");

  public static final EngineOption<Integer> COMPACTION_THREADS =
      EngineOption.integer("compaction.threads", 4, 1, 256, "Compaction worker threads.");

  public static final EngineOption<Integer> SUBCOMPACTIONS =
      EngineOption.integer(
          "compaction.subcompactions",
          2,
          1,
          256,
          "Key ranges a merge that writers wait for (a manual compaction, or an L0 merge of at"
              + " least half compaction.write-stall-limit files) is split into, run in parallel on"
              + " idle compaction threads (at most compaction.threads); 1 merges in one thread.");

  public static final EngineOption<Boolean> FOREIGN_BUCKET_CLEANUP =
      EngineOption.bool(
          "compaction.foreign-bucket-cleanup",
          true,
          "When no other compaction is due, rewrite files that still hold rows of buckets the"
              + " shard gave up (after a shrink), so their space is freed and a later rescale can"
              + " hand the files over as they are. A file read in place from the snapshot or"
              + " checkpoint the shard was restored or rescaled from is left alone until a"
              + " snapshot of the shard itself (a checkpoint Flink confirmed) names it, so the"
              + " first checkpoint after a rescale still uploads nothing but metadata.");

  public static final EngineOption<Boolean> READ_AHEAD_ENABLED =
      EngineOption.bool(
          "compaction.read-ahead.enabled",
          true,
          "Compaction inputs are read sequentially in compaction.read-ahead.size chunks instead"
              + " of block by block.");

  public static final EngineOption<Long> READ_AHEAD_SIZE =
      EngineOption.size(
          "compaction.read-ahead.size",
          "2mb",
          4096,
          256L << 20,
          "Chunk size of compaction read-ahead.");

  public static final EngineOption<Long> LEVEL_BASE_SIZE =
      EngineOption.size(
          "compaction.level-base-size", "256mb", 1024, Long.MAX_VALUE / 1024, "Target size of L1.");

  public static final EngineOption<Integer> LEVEL_SIZE_MULTIPLIER =
      EngineOption.integer(
          "compaction.level-size-multiplier",
          10,
          2,
          1000,
          "Each level's target size is this times the previous level's.");

  public static final EngineOption<Integer> MAX_LEVELS =
      EngineOption.integer("compaction.max-levels", 7, 2, 16, "Number of levels, L0 included.");

  public static final EngineOption<Long> TARGET_FILE_SIZE =
      EngineOption.size(
          "sst.target-file-size",
          "64mb",
          1024,
          4L << 30,
          "Compaction output files are cut at this size.");

  public static final EngineOption<Long> BLOCK_SIZE =
      EngineOption.size(
          "sst.block-size", "4kb", 256, 16L << 20, "Uncompressed size of a data block.");

  public static final EngineOption<String> BLOCK_SIZE_MERGE_FAMILIES =
      EngineOption.text(
          "sst.merge-family-block-size",
          "same",
          "same, or a size of 256 bytes to 16mb",
          "Uncompressed size of a data block of a family with a merge-operator column (lists);"
              + " same follows sst.block-size. A list that grows by appends of one batch repeats"
              + " it, so a larger block holds more repeats to compress against.");

  public static final EngineOption<Integer> BLOCK_RESTART_INTERVAL =
      EngineOption.integer(
          "sst.block-restart-interval",
          16,
          1,
          1024,
          "Keys between the restart points of a block's prefix compression.");

  public static final EngineOption<Boolean> DATA_BLOCK_HASH_INDEX =
      EngineOption.bool(
          "sst.data-block-hash-index",
          false,
          "Data blocks carry a hash index of their keys, so a point get scans one restart group"
              + " instead of binary-searching the restarts (files written with it need a build"
              + " that reads table format 2).");

  public static final EngineOption<Boolean> BLOOM_FILTER_ENABLED =
      EngineOption.bool("sst.bloom-filter.enabled", true, "Tables carry bloom filters.");

  public static final EngineOption<Integer> BLOOM_BITS_PER_KEY =
      EngineOption.integer(
          "sst.bloom-filter.bits-per-key", 10, 1, 64, "Bloom filter bits per key.");

  public static final EngineOption<Boolean> PARTITIONED_INDEX =
      EngineOption.bool(
          "sst.partitioned-index.enabled",
          true,
          "Index and filter are split into partitions under a small top-level index once they"
              + " exceed one block.");

  public static final EngineOption<Integer> PINNED_METADATA_MAX_LEVEL =
      EngineOption.integer(
          "sst.pinned-metadata.max-level",
          "2",
          "2",
          "-1..compaction.max-levels - 1",
          -1,
          15,
          "Top-level index and filter of tables in L0..LN stay decoded in memory outside the"
              + " block cache; -1 disables.");

  public static final EngineOption<Boolean> PIN_PARTITIONS =
      EngineOption.bool(
          "sst.pinned-metadata.partitions.enabled",
          true,
          "Also pin the index and filter partitions, and keep 52 bytes per data block of where its"
              + " restarts lie, so that reads fetch a block's lines together.");

  public static final EngineOption<MetadataCacheMode> METADATA_CACHE_MODE =
      EngineOption.enumeration(
          "sst.read-metadata-cache.mode",
          MetadataCacheMode.class,
          MetadataCacheMode.EAGER,
          "When pinned index and filter metadata is decoded: eager (when a table opens), lazy (on"
              + " its first point read) or off (never; index and filter go through the block"
              + " cache).");

  public static final EngineOption<String> COMPRESSION =
      EngineOption.text(
          "sst.compression",
          "none,none,lz4",
          "none or lz4 per level, comma-separated",
          "Block compression per level; the last entry applies to all deeper levels.");

  public static final EngineOption<String> COMPRESSION_MERGE_FAMILIES =
      EngineOption.text(
          "sst.merge-family-compression",
          "same",
          "same, or none or lz4 per level, comma-separated",
          "Block compression per level for families with a merge-operator column (lists); same"
              + " follows sst.compression. Such values grow by appends, are rewritten by every"
              + " compaction that folds onto them, and compress several-fold.");

  public static final EngineOption<Long> VALUE_SEPARATION_THRESHOLD =
      EngineOption.size(
          "value-separation.threshold",
          "1kb",
          0,
          1L << 30,
          "Column values larger than this go to the value log at flush; 0 disables separation.");

  public static final EngineOption<Boolean> VALUE_SEPARATION_MERGE_FAMILIES =
      EngineOption.bool(
          "value-separation.merge-families",
          true,
          "Whether families with a merge-operator column separate large values too; false keeps"
              + " their values in the tables, so folding an operand onto a growing value (a list)"
              + " never reads it back from the value log and writes a new copy there.");

  public static final EngineOption<Long> BLOCK_CACHE_SIZE =
      EngineOption.size(
          "block-cache.size",
          "64mb",
          0,
          1L << 40,
          "Bytes of decoded blocks cached, shared by all files.");

  public static final EngineOption<Long> ROW_CACHE_SIZE =
      EngineOption.size(
          "row-cache.size",
          "0",
          0,
          1L << 40,
          "Bytes of point-read results a Reader keeps (the values of a key's projected columns, or"
              + " that it has none), so a repeated read of a key skips the filter, index and block"
              + " search; shared by the reader's shards, evicted oldest first. 0 keeps none."
              + " Used only by readers of published snapshots, whose data never changes.");

  public static final EngineOption<Long> DEFAULT_TTL =
      EngineOption.duration(
          "ttl.default",
          "0",
          "Expiry of writes without their own TTL (e.g. 10m); 0 never expires.");

  public static final EngineOption<Boolean> FSYNC_ENABLED =
      EngineOption.bool(
          "fsync.enabled",
          true,
          "Tables, value logs and manifests are fsynced before they are published; false trades"
              + " crash durability of flushed data for speed.");

  public static final EngineOption<FsyncPolicy> FSYNC_POLICY =
      EngineOption.enumeration(
          "fsync.policy",
          FsyncPolicy.class,
          FsyncPolicy.PUBLISH,
          "With fsync enabled: publish fsyncs every table, value log and manifest before it is"
              + " published; snapshot skips those fsyncs and fsyncs a file only when"
              + " Db.makeDurable asks (for shards whose durable copy is a snapshot, such as a"
              + " state backend's checkpoint; a reopen of the working directory after a machine"
              + " crash may then fail).");

  public static final EngineOption<Boolean> DIRECT_IO_ENABLED =
      EngineOption.bool(
          "direct-io.enabled",
          false,
          "Table block reads bypass the page cache (O_DIRECT) where the file system supports it;"
              + " compaction's sequential reads stay buffered.");

  public static final EngineOption<Boolean> MMAP_READS_ENABLED =
      EngineOption.bool(
          "mmap-reads.enabled",
          true,
          "Block reads of local table files come from a read-only memory mapping of the file (no"
              + " system call per block-cache miss; checksums still verified); ignored with direct"
              + " I/O and for tables read in place on object storage.");

  public static final EngineOption<Long> DIRECT_IO_BUFFER_SIZE =
      EngineOption.size(
          "direct-io.buffer-size",
          "2kb",
          512,
          64L << 20,
          "Size of each pooled aligned read buffer (rounded up to the file system block size);"
              + " larger reads use a one-off buffer.");

  public static final EngineOption<Integer> DIRECT_IO_POOL_MAX_SIZE =
      EngineOption.integer(
          "direct-io.pool-max-size", 64, 0, 100_000, "Aligned read buffers kept for reuse.");

  public static final EngineOption<Integer> SNAPSHOT_RETENTION =
      EngineOption.integer(
          "snapshot.retention",
          0,
          0,
          1_000_000,
          "Published shard snapshots kept, newest first (pinned ones extra); 0 keeps all.");

  public static final EngineOption<Long> REMOTE_CACHE_SIZE =
      EngineOption.size(
          "remote-cache.size",
          "4gb",
          0,
          1L << 50,
          "Bytes of remote data files kept on the local CACHE volume when the primary volume is"
              + " object storage (files the writer produced count too); least recently used go"
              + " first.");

  public static final EngineOption<Long> REMOTE_CACHE_CHUNK_SIZE =
      EngineOption.size(
          "remote-cache.chunk-size",
          "64kb",
          4096,
          64L << 20,
          "Remote reads that miss that cache fetch and keep whole aligned chunks of this size.");

  private static final List<EngineOption<?>> ALL =
      Collections.unmodifiableList(
          Arrays.asList(
              TOTAL_BUCKETS,
              BUCKET_RANGES,
              MEMTABLE_TYPE,
              MEMTABLE_CAPACITY,
              MEMTABLE_BUFFER_COUNT,
              LEND_IDLE_MEMTABLE_BUFFERS,
              COMPACTION_POLICY,
              L0_FILE_LIMIT,
              WRITE_STALL_LIMIT,
              COMPACTION_THREADS,
              SUBCOMPACTIONS,
              FOREIGN_BUCKET_CLEANUP,
              READ_AHEAD_ENABLED,
              READ_AHEAD_SIZE,
              LEVEL_BASE_SIZE,
              LEVEL_SIZE_MULTIPLIER,
              MAX_LEVELS,
              TARGET_FILE_SIZE,
              BLOCK_SIZE,
              BLOCK_SIZE_MERGE_FAMILIES,
              BLOCK_RESTART_INTERVAL,
              DATA_BLOCK_HASH_INDEX,
              BLOOM_FILTER_ENABLED,
              BLOOM_BITS_PER_KEY,
              PARTITIONED_INDEX,
              PINNED_METADATA_MAX_LEVEL,
              PIN_PARTITIONS,
              METADATA_CACHE_MODE,
              COMPRESSION,
              COMPRESSION_MERGE_FAMILIES,
              VALUE_SEPARATION_THRESHOLD,
              VALUE_SEPARATION_MERGE_FAMILIES,
              BLOCK_CACHE_SIZE,
              ROW_CACHE_SIZE,
              DEFAULT_TTL,
              FSYNC_ENABLED,
              FSYNC_POLICY,
              DIRECT_IO_ENABLED,
              MMAP_READS_ENABLED,
              DIRECT_IO_BUFFER_SIZE,
              DIRECT_IO_POOL_MAX_SIZE,
              SNAPSHOT_RETENTION,
              REMOTE_CACHE_SIZE,
              REMOTE_CACHE_CHUNK_SIZE));

  private static final Map<String, EngineOption<?>> BY_KEY = new LinkedHashMap<>();

  static {
    for (EngineOption<?> option : ALL) {
      BY_KEY.put(option.key(), option);
    }
  }

  private EngineOptions() {}

  /** Every engine option, in documentation order. */
  public static List<EngineOption<?>> all() {
    return ALL;
  }

  /** The option with this key (without any prefix), if it is an engine key. */
  public static Optional<EngineOption<?>> find(String key) {
    return Optional.ofNullable(BY_KEY.get(key));
  }

  /** The README's option table: key, type, default, allowed values and meaning of every key. */
  public static String markdownTable() {
    StringBuilder out = new StringBuilder();
    out.append("| Key | Type | Default | Allowed | Meaning |\n");
    out.append("|---|---|---|---|---|\n");
    for (EngineOption<?> option : ALL) {
      out.append("| `")
          .append(option.key())
          .append("` | ")
          .append(option.type().name().toLowerCase(Locale.ROOT))
          .append(" | `")
          .append(option.defaultDisplay())
          .append("` | ")
          .append(option.allowedValues())
          .append(" | ")
          .append(option.description())
          .append(" |\n");
    }
    return out.toString();
  }
}
