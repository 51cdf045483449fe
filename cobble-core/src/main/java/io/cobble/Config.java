package io.cobble;

import io.cobble.merge.MergeOperatorResolver;
import io.cobble.sst.SharedTables;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Engine configuration. Immutable; every value is validated when built, and an error names the key
 * and what it allows. The keys, their types, defaults, allowed values and meaning are declared in
 * {@link EngineOptions} (the README's option table is generated from there); the Flink state
 * backend exposes them as {@code state.backend.cobble.<key>} ({@link #fromPrefixed}).
 *
 * <p>The clock, custom merge operators and a shared {@link MemoryPool} are set on the builder only
 * (they are objects, not text).
 */
public final class Config {
  private static final Map<String, String> DEFAULTS = new LinkedHashMap<>();

  static {
    for (EngineOption<?> option : EngineOptions.all()) {
      DEFAULTS.put(option.key(), option.defaultValue());
    }
  }

  private final Map<String, String> values;
  private final Clock clock;
  private final MergeOperatorResolver resolver;
  private final boolean scratchRestore;
  private final boolean backgroundMetadata;
  private final boolean residentBlocks;
  private final SharedTables sharedTables;
  private final MemoryPool memoryPool;

  private final int totalBuckets;
  private final int snapshotRetention;
  private final int[] bucketRanges;
  private final MemTableType memtableType;
  private final long memtableCapacity;
  private final int memtableBufferCount;
  private final boolean lendIdleMemtableBuffers;
  private final CompactionPolicy compactionPolicy;
  private final int l0FileLimit;
  private final int writeStallLimit;
  private final int compactionThreads;
  private final int subcompactions;
  private final boolean readAheadEnabled;
  private final boolean foreignBucketCleanup;
  private final int readAheadSize;
  private final long levelBaseSize;
  private final int levelSizeMultiplier;
  private final int maxLevels;
  private final long targetFileSize;
  private final int blockSize;
  private final int blockSizeMergeFamilies;
  private final int blockRestartInterval;
  private final boolean dataBlockHashIndex;
  private final boolean bloomEnabled;
  private final int bloomBitsPerKey;
  private final boolean partitionedIndex;
  private final int pinnedMaxLevel;
  private final MetadataCacheMode metadataCacheMode;
  private final boolean pinPartitions;
  private final boolean[] lz4PerLevel;
  private final boolean[] lz4PerLevelMergeFamilies;
  private final long valueSeparationThreshold;
  private final boolean separateMergeFamilies;
  private final long blockCacheSize;
  private final long rowCacheSize;
  private final long defaultTtlMillis;
  private final boolean directIoEnabled;
  private final boolean mmapReadsEnabled;
  private final boolean fsyncEnabled;
  private final FsyncPolicy fsyncPolicy;
  private final int directIoBufferSize;
  private final int directIoPoolMaxSize;
  private final long remoteCacheSize;
  private final int remoteCacheChunkSize;

  private Config(
      Map<String, String> values,
      Clock clock,
      MergeOperatorResolver resolver,
      boolean scratchRestore,
      boolean backgroundMetadata,
      boolean residentBlocks,
      MemoryPool memoryPool,
      SharedTables sharedTables) {
    this.sharedTables = sharedTables;
    this.scratchRestore = scratchRestore;
    this.backgroundMetadata = backgroundMetadata;
    this.residentBlocks = residentBlocks;
    this.memoryPool = memoryPool;
    this.values = Collections.unmodifiableMap(values);
    this.clock = clock;
    this.resolver = resolver;
    totalBuckets = parse(EngineOptions.TOTAL_BUCKETS);
    snapshotRetention = parse(EngineOptions.SNAPSHOT_RETENTION);
    bucketRanges = parseRanges(parse(EngineOptions.BUCKET_RANGES), totalBuckets);
    memtableType = parse(EngineOptions.MEMTABLE_TYPE);
    memtableCapacity = parse(EngineOptions.MEMTABLE_CAPACITY);
    memtableBufferCount = parse(EngineOptions.MEMTABLE_BUFFER_COUNT);
    lendIdleMemtableBuffers = parse(EngineOptions.LEND_IDLE_MEMTABLE_BUFFERS);
    compactionPolicy = parse(EngineOptions.COMPACTION_POLICY);
    l0FileLimit = parse(EngineOptions.L0_FILE_LIMIT);
    EngineOption<Integer> stall = EngineOptions.WRITE_STALL_LIMIT;
    if (raw(stall).trim().equalsIgnoreCase(EngineOption.DERIVED)) {
      writeStallLimit = Math.max(l0FileLimit + 2, 32);
    } else {
      writeStallLimit = stall.parseInt(raw(stall), l0FileLimit + 2, stall.max());
    }
    compactionThreads = parse(EngineOptions.COMPACTION_THREADS);
    subcompactions = parse(EngineOptions.SUBCOMPACTIONS);
    readAheadEnabled = parse(EngineOptions.READ_AHEAD_ENABLED);
    foreignBucketCleanup = parse(EngineOptions.FOREIGN_BUCKET_CLEANUP);
    readAheadSize = (int) (long) parse(EngineOptions.READ_AHEAD_SIZE);
    levelBaseSize = parse(EngineOptions.LEVEL_BASE_SIZE);
    levelSizeMultiplier = parse(EngineOptions.LEVEL_SIZE_MULTIPLIER);
    maxLevels = parse(EngineOptions.MAX_LEVELS);
    targetFileSize = parse(EngineOptions.TARGET_FILE_SIZE);
    blockSize = (int) (long) parse(EngineOptions.BLOCK_SIZE);
    String mergeBlock = parse(EngineOptions.BLOCK_SIZE_MERGE_FAMILIES);
    blockSizeMergeFamilies =
        mergeBlock.equalsIgnoreCase("same")
            ? blockSize
            : (int)
                EngineOptions.BLOCK_SIZE_MERGE_FAMILIES.parseSize(
                    mergeBlock, EngineOptions.BLOCK_SIZE.min(), EngineOptions.BLOCK_SIZE.max());
    blockRestartInterval = parse(EngineOptions.BLOCK_RESTART_INTERVAL);
    dataBlockHashIndex = parse(EngineOptions.DATA_BLOCK_HASH_INDEX);
    bloomEnabled = parse(EngineOptions.BLOOM_FILTER_ENABLED);
    bloomBitsPerKey = parse(EngineOptions.BLOOM_BITS_PER_KEY);
    partitionedIndex = parse(EngineOptions.PARTITIONED_INDEX);
    EngineOption<Integer> pinned = EngineOptions.PINNED_METADATA_MAX_LEVEL;
    pinnedMaxLevel = pinned.parseInt(raw(pinned), pinned.min(), maxLevels - 1);
    pinPartitions = parse(EngineOptions.PIN_PARTITIONS);
    metadataCacheMode = parse(EngineOptions.METADATA_CACHE_MODE);
    lz4PerLevel = parseCompression(EngineOptions.COMPRESSION, maxLevels);
    lz4PerLevelMergeFamilies =
        parse(EngineOptions.COMPRESSION_MERGE_FAMILIES).equalsIgnoreCase("same")
            ? lz4PerLevel
            : parseCompression(EngineOptions.COMPRESSION_MERGE_FAMILIES, maxLevels);
    valueSeparationThreshold = parse(EngineOptions.VALUE_SEPARATION_THRESHOLD);
    separateMergeFamilies = parse(EngineOptions.VALUE_SEPARATION_MERGE_FAMILIES);
    blockCacheSize = parse(EngineOptions.BLOCK_CACHE_SIZE);
    rowCacheSize = parse(EngineOptions.ROW_CACHE_SIZE);
    defaultTtlMillis = parse(EngineOptions.DEFAULT_TTL);
    directIoEnabled = parse(EngineOptions.DIRECT_IO_ENABLED);
    mmapReadsEnabled = parse(EngineOptions.MMAP_READS_ENABLED);
    fsyncEnabled = parse(EngineOptions.FSYNC_ENABLED);
    fsyncPolicy = parse(EngineOptions.FSYNC_POLICY);
    directIoBufferSize = (int) (long) parse(EngineOptions.DIRECT_IO_BUFFER_SIZE);
    directIoPoolMaxSize = parse(EngineOptions.DIRECT_IO_POOL_MAX_SIZE);
    remoteCacheSize = parse(EngineOptions.REMOTE_CACHE_SIZE);
    remoteCacheChunkSize = (int) (long) parse(EngineOptions.REMOTE_CACHE_CHUNK_SIZE);
  }

  public static Config defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Loads a YAML file: flat ({@code memtable.type: hash}) or nested maps, merged over defaults. */
  public static Config fromYaml(Path file) {
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      return builder().yaml(r, file.toString()).build();
    } catch (IOException e) {
      throw new CobbleException("cannot read config file " + file, e);
    }
  }

  public static Config fromYamlString(String yaml) {
    return builder().yaml(new java.io.StringReader(yaml), "<yaml string>").build();
  }

  /**
   * A configuration from the entries of {@code map} whose key is {@code prefix} followed by an
   * engine key (for example {@code state.backend.cobble.memtable.type} with prefix {@code
   * state.backend.cobble.}), merged over defaults. Entries outside the prefix, and keys under it
   * that are not engine keys (an integration's own options), are left to their owner.
   */
  public static Config fromPrefixed(Map<String, String> map, String prefix) {
    Builder builder = builder();
    for (Map.Entry<String, String> e : new TreeMap<>(map).entrySet()) {
      String key = e.getKey();
      if (key.startsWith(prefix) && DEFAULTS.containsKey(key.substring(prefix.length()))) {
        builder.set(key.substring(prefix.length()), e.getValue());
      }
    }
    return builder.build();
  }

  /** The documented keys with their default values (derived values shown as "derived"). */
  public static Map<String, String> defaultValues() {
    return Collections.unmodifiableMap(DEFAULTS);
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.values.putAll(values);
    b.clock = clock;
    b.resolver = resolver;
    b.scratchRestore = scratchRestore;
    b.backgroundMetadata = backgroundMetadata;
    b.residentBlocks = residentBlocks;
    b.memoryPool = memoryPool;
    b.sharedTables = sharedTables;
    return b;
  }

  /** All keys with their effective textual values. */
  public Map<String, String> values() {
    return values;
  }

  private String raw(EngineOption<?> option) {
    return values.get(option.key());
  }

  private <T> T parse(EngineOption<T> option) {
    return option.parse(raw(option));
  }

  /** The parsed value of {@code option} in this configuration. */
  public <T> T get(EngineOption<T> option) {
    if (option == EngineOptions.WRITE_STALL_LIMIT) {
      return option.parse(String.valueOf(writeStallLimit));
    }
    return parse(option);
  }

  private static int[] parseRanges(String text, int totalBuckets) {
    String key = EngineOptions.BUCKET_RANGES.key();
    if (text.trim().equalsIgnoreCase("all")) {
      return new int[] {0, totalBuckets - 1};
    }
    List<Integer> out = new ArrayList<>();
    for (String part : text.split(",")) {
      String p = part.trim();
      String[] ends = p.split("-");
      try {
        int lo = Integer.parseInt(ends[0].trim());
        int hi = ends.length == 2 ? Integer.parseInt(ends[1].trim()) : lo;
        if (ends.length > 2 || lo < 0 || hi >= totalBuckets || lo > hi) {
          throw new NumberFormatException();
        }
        if (!out.isEmpty() && lo <= out.get(out.size() - 1)) {
          throw new IllegalArgumentException(
              "invalid " + key + " '" + text + "': ranges must be ascending and disjoint");
        }
        out.add(lo);
        out.add(hi);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "invalid range '"
                + p
                + "' in "
                + key
                + ": expected 'lo-hi' or 'n' with 0 <= lo <= hi < total-buckets ("
                + totalBuckets
                + "), or 'all'");
      }
    }
    int[] r = new int[out.size()];
    for (int i = 0; i < r.length; i++) {
      r[i] = out.get(i);
    }
    return r;
  }

  private boolean[] parseCompression(EngineOption<String> option, int maxLevels) {
    String[] parts = parse(option).split(",");
    boolean[] lz4 = new boolean[maxLevels];
    for (int level = 0; level < maxLevels; level++) {
      String p = parts[Math.min(level, parts.length - 1)].trim().toLowerCase(Locale.ROOT);
      if (p.equals("lz4")) {
        lz4[level] = true;
      } else if (!p.equals("none")) {
        throw new IllegalArgumentException(
            "invalid compression '"
                + p
                + "' in "
                + option.key()
                + ": allowed are "
                + (option == EngineOptions.COMPRESSION ? "" : "same, or ")
                + "none, lz4 (comma-separated per level)");
      }
    }
    return lz4;
  }

  public Clock clock() {
    return clock;
  }

  /** See {@link Builder#memoryPool}; null when the Db sizes its own memory. */
  public MemoryPool memoryPool() {
    return memoryPool;
  }

  /** See {@link Builder#scratchRestore}. */
  public boolean scratchRestore() {
    return scratchRestore;
  }

  /** See {@link Builder#backgroundMetadata}. */
  public boolean backgroundMetadata() {
    return backgroundMetadata;
  }

  /** See {@link Builder#residentBlocks}. */
  public boolean residentBlocks() {
    return residentBlocks;
  }

  /** See {@link Builder#sharedTables}; null when the Db opens its own. */
  public SharedTables sharedTables() {
    return sharedTables;
  }

  public MergeOperatorResolver mergeOperatorResolver() {
    return resolver;
  }

  /** Published shard snapshots to keep; 0 keeps all. */
  public int snapshotRetention() {
    return snapshotRetention;
  }

  public int totalBuckets() {
    return totalBuckets;
  }

  /** Pairs of inclusive [lo, hi] bucket bounds. */
  public int[] bucketRanges() {
    return bucketRanges.clone();
  }

  public boolean ownsBucket(int bucket) {
    for (int i = 0; i < bucketRanges.length; i += 2) {
      if (bucket >= bucketRanges[i] && bucket <= bucketRanges[i + 1]) {
        return true;
      }
    }
    return false;
  }

  public MemTableType memtableType() {
    return memtableType;
  }

  public long memtableCapacity() {
    return memtableCapacity;
  }

  public int memtableBufferCount() {
    return memtableBufferCount;
  }

  /** See {@link EngineOptions#LEND_IDLE_MEMTABLE_BUFFERS}. */
  public boolean lendIdleMemtableBuffers() {
    return lendIdleMemtableBuffers;
  }

  public CompactionPolicy compactionPolicy() {
    return compactionPolicy;
  }

  public int l0FileLimit() {
    return l0FileLimit;
  }

  public int writeStallLimit() {
    return writeStallLimit;
  }

  public int compactionThreads() {
    return compactionThreads;
  }

  public int subcompactions() {
    return subcompactions;
  }

  /** Whether background compaction rewrites files holding buckets the shard gave up. */
  public boolean foreignBucketCleanup() {
    return foreignBucketCleanup;
  }

  public boolean readAheadEnabled() {
    return readAheadEnabled;
  }

  public int readAheadSize() {
    return readAheadSize;
  }

  public long levelBaseSize() {
    return levelBaseSize;
  }

  public int levelSizeMultiplier() {
    return levelSizeMultiplier;
  }

  public int maxLevels() {
    return maxLevels;
  }

  public long targetFileSize() {
    return targetFileSize;
  }

  public int blockSize() {
    return blockSize;
  }

  /** The data block size of a family with ({@code mergeFamily}) or without a merge operator. */
  public int blockSize(boolean mergeFamily) {
    return mergeFamily ? blockSizeMergeFamilies : blockSize;
  }

  public int blockRestartInterval() {
    return blockRestartInterval;
  }

  public boolean dataBlockHashIndex() {
    return dataBlockHashIndex;
  }

  public boolean bloomFilterEnabled() {
    return bloomEnabled;
  }

  public int bloomBitsPerKey() {
    return bloomBitsPerKey;
  }

  public boolean partitionedIndex() {
    return partitionedIndex;
  }

  public int pinnedMetadataMaxLevel() {
    return pinnedMaxLevel;
  }

  public MetadataCacheMode metadataCacheMode() {
    return metadataCacheMode;
  }

  public boolean pinPartitions() {
    return pinPartitions;
  }

  /**
   * Whether {@code level}'s tables are LZ4-compressed, for a family with a merge operator or not.
   */
  public boolean lz4ForLevel(int level, boolean mergeFamily) {
    boolean[] lz4 = mergeFamily ? lz4PerLevelMergeFamilies : lz4PerLevel;
    return lz4[Math.min(level, lz4.length - 1)];
  }

  public long valueSeparationThreshold() {
    return valueSeparationThreshold;
  }

  /** Whether families with a merge-operator column separate values into the value log. */
  public boolean separateMergeFamilies() {
    return separateMergeFamilies;
  }

  public long blockCacheSize() {
    return blockCacheSize;
  }

  public long rowCacheSize() {
    return rowCacheSize;
  }

  public long remoteCacheSize() {
    return remoteCacheSize;
  }

  public int remoteCacheChunkSize() {
    return remoteCacheChunkSize;
  }

  public long defaultTtlMillis() {
    return defaultTtlMillis;
  }

  public boolean fsyncEnabled() {
    return fsyncEnabled;
  }

  public FsyncPolicy fsyncPolicy() {
    return fsyncPolicy;
  }

  /** Whether flushes and compactions fsync their files (and manifests) before publishing them. */
  public boolean fsyncOnPublish() {
    return fsyncEnabled && fsyncPolicy == FsyncPolicy.PUBLISH;
  }

  public boolean directIoEnabled() {
    return directIoEnabled;
  }

  public boolean mmapReadsEnabled() {
    return mmapReadsEnabled;
  }

  public int directIoBufferSize() {
    return directIoBufferSize;
  }

  public int directIoPoolMaxSize() {
    return directIoPoolMaxSize;
  }

  @Override
  public String toString() {
    return "Config" + values;
  }

  /** Collects key/value pairs; unknown keys are rejected with the list of known ones. */
  public static final class Builder {
    private final Map<String, String> values = new LinkedHashMap<>(DEFAULTS);
    private Clock clock = Clock.SYSTEM;
    private MergeOperatorResolver resolver = name -> null;
    private boolean scratchRestore;
    private boolean backgroundMetadata;
    private boolean residentBlocks;
    private MemoryPool memoryPool;
    private SharedTables sharedTables;

    private Builder() {}

    public Builder set(String key, Object value) {
      if (!DEFAULTS.containsKey(key)) {
        throw new IllegalArgumentException(
            "unknown config key '" + key + "': known keys are " + DEFAULTS.keySet());
      }
      if (value == null) {
        throw new IllegalArgumentException("null value for config key '" + key + "'");
      }
      values.put(key, String.valueOf(value));
      return this;
    }

    /** Sets {@code option} to {@code value} (validated, with the others, by {@link #build}). */
    public <T> Builder set(EngineOption<T> option, T value) {
      return set(option.key(), option.format(value));
    }

    public Builder setAll(Map<String, ?> map) {
      for (Map.Entry<String, ?> e : new TreeMap<>(map).entrySet()) {
        set(e.getKey(), e.getValue());
      }
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = java.util.Objects.requireNonNull(clock, "clock");
      return this;
    }

    public Builder mergeOperatorResolver(MergeOperatorResolver resolver) {
      this.resolver = java.util.Objects.requireNonNull(resolver, "resolver");
      return this;
    }

    /**
     * Declares that a restore from a snapshot writes into a directory nobody reopens after a crash:
     * its owner restores from the snapshot again into a fresh directory (Flink's keyed backend
     * does). Such a restore skips the fsyncs that make its local metadata survive a crash (restore
     * marker, list of files used in place, first manifest); the snapshot's files are durable where
     * they lie, and everything the Db writes afterwards is fsynced as {@code fsync.enabled} says.
     * Not a configuration key: only the embedding code knows this.
     */
    public Builder scratchRestore(boolean scratch) {
      this.scratchRestore = scratch;
      return this;
    }

    /**
     * Opens the Db without loading the pinned index and filter metadata ({@code
     * sst.pinned-metadata.*}) of the tables its manifest names: a background thread loads it after
     * open, and a read that needs a table's metadata first loads it itself. Opening (a restore, a
     * rescale) then reads each table's footer and properties only, whatever the state size, and a
     * damaged index or filter fails the first read of its table instead of the open. Tables the Db
     * writes are not affected. Not a configuration key: the embedder whose restore time matters
     * (Flink's keyed backend, whose failover waits for it) sets it.
     */
    public Builder backgroundMetadata(boolean background) {
      this.backgroundMetadata = background;
      return this;
    }

    /**
     * Keeps each data block a point read brings in for as long as its table is open, in memory
     * reserved from the block cache (see {@code io.cobble.sst.ResidentBlocks}), instead of in the
     * cache's eviction order: a read of a kept block takes no cache lookup and no pin. For a Db
     * whose tables never change under its readers (a read-only Db over a snapshot); where the cache
     * cannot hold them all, the rest go through the evicting cache as usual. Not a configuration
     * key: the read-only Db sets it.
     */
    public Builder residentBlocks(boolean resident) {
      this.residentBlocks = resident;
      return this;
    }

    /**
     * Opens the tables the manifest names through {@code tables}, which hands out the table another
     * Db over the same files already opened: for read-only Dbs over successive snapshots (see
     * {@link SharedTables}). Not a configuration key: the reader sets it.
     */
    public Builder sharedTables(SharedTables tables) {
      this.sharedTables = tables;
      return this;
    }

    /**
     * Makes the Db share {@code pool}'s block cache and memtable budget with the other Dbs on it
     * instead of sizing its own ({@code block-cache.size} is then unused); null for its own.
     */
    public Builder memoryPool(MemoryPool pool) {
      this.memoryPool = pool;
      return this;
    }

    Builder yaml(Reader reader, String source) {
      Object root;
      try {
        root = new Yaml(new SafeConstructor(new LoaderOptions())).load(reader);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("invalid YAML in " + source + ": " + e.getMessage(), e);
      }
      if (root == null) {
        return this;
      }
      if (!(root instanceof Map)) {
        throw new IllegalArgumentException(
            "invalid config in " + source + ": top level must be a mapping of keys to values");
      }
      Map<String, Object> flat = new LinkedHashMap<>();
      flatten("", (Map<?, ?>) root, flat);
      return setAll(flat);
    }

    private static void flatten(String prefix, Map<?, ?> map, Map<String, Object> out) {
      for (Map.Entry<?, ?> e : map.entrySet()) {
        String key = prefix + e.getKey();
        if (e.getValue() instanceof Map && !DEFAULTS.containsKey(key)) {
          flatten(key + ".", (Map<?, ?>) e.getValue(), out);
        } else {
          out.put(key, e.getValue());
        }
      }
    }

    public Config build() {
      return new Config(
          new LinkedHashMap<>(values),
          clock,
          resolver,
          scratchRestore,
          backgroundMetadata,
          residentBlocks,
          memoryPool,
          sharedTables);
    }
  }
}
