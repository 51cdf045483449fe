package io.cobble;

import io.cobble.merge.MergeOperatorResolver;
import io.cobble.util.Sizes;
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
 * Engine configuration. Immutable; every value is validated when built. Keys, defaults and meaning
 * (the Flink state backend maps {@code state.backend.cobble.<key>} onto these):
 *
 * <ul>
 *   <li>{@code total-buckets} (1): number of buckets, 1..65536, fixed when the DB is created.
 *   <li>{@code bucket-ranges} (all): inclusive bucket ranges this shard owns, e.g. {@code
 *       0-127,256-300}.
 *   <li>{@code memtable.type} (adaptive): skiplist, hash, vec or adaptive.
 *   <li>{@code memtable.capacity} (32mb): bytes one memtable holds before it is sealed and flushed.
 *   <li>{@code memory.memtable-buffer-count} (2): memtables in memory (active + immutable); memory
 *       use is bounded by capacity × count, writes wait when all are full.
 *   <li>{@code compaction.policy} (score_priority): round_robin, min_overlap or score_priority.
 *   <li>{@code compaction.l0-file-limit} (2): L0 files of a tree that trigger an L0 compaction.
 *   <li>{@code compaction.write-stall-limit} (max(l0-file-limit + 2, 32)): writes block while
 *       immutable memtables + L0 files of any tree exceed this; must be ≥ l0-file-limit + 2.
 *   <li>{@code compaction.threads} (4): compaction worker threads.
 *   <li>{@code compaction.read-ahead.enabled} (true): compaction inputs are read sequentially in
 *       {@code compaction.read-ahead.size} (2mb) chunks instead of block by block.
 *   <li>{@code compaction.level-base-size} (256mb): target size of L1.
 *   <li>{@code compaction.level-size-multiplier} (10): each level's target is this times the
 *       previous one.
 *   <li>{@code compaction.max-levels} (7): number of levels including L0, 2..16.
 *   <li>{@code sst.target-file-size} (64mb): compaction output files are cut at this size.
 *   <li>{@code sst.block-size} (4kb): uncompressed data block size.
 *   <li>{@code sst.block-restart-interval} (16): keys between prefix-compression restart points.
 *   <li>{@code sst.bloom-filter.enabled} (true), {@code sst.bloom-filter.bits-per-key} (10).
 *   <li>{@code sst.partitioned-index.enabled} (true): index (and filter) split into partitions
 *       under a small top-level index once they exceed one block.
 *   <li>{@code sst.pinned-metadata.max-level} (2): top-level index/filter of files in L0..LN stay
 *       decoded in memory outside the block cache; -1 disables.
 *   <li>{@code sst.pinned-metadata.partitions.enabled} (true): also pin index/filter partitions.
 *   <li>{@code sst.read-metadata-cache.mode} (eager): when that pinned metadata is decoded: eager
 *       (when a table opens), lazy (on the table's first point read) or off (never: index and
 *       filter blocks go through the block cache, whatever sst.pinned-metadata.* says).
 *   <li>{@code sst.compression} (none,none,lz4): compression per level (none or lz4); the last
 *       entry applies to all deeper levels.
 *   <li>{@code value-separation.threshold} (1kb): column values larger than this go to the value
 *       log at flush; 0 disables separation.
 *   <li>{@code block-cache.size} (64mb): bytes of decoded blocks cached, shared by all files.
 *   <li>{@code ttl.default} (0): expiry applied to writes without an explicit TTL (e.g. 10m); 0
 *       means never expire.
 *   <li>{@code fsync.enabled} (true): tables, value logs and manifests are fsynced before they are
 *       published. Turning it off trades crash durability of flushed data for speed (tests, scratch
 *       data); unflushed memtable data is never durable either way.
 *   <li>{@code direct-io.enabled} (false): table block reads bypass the page cache (O_DIRECT) where
 *       the file system supports it; compaction's sequential reads stay buffered.
 *   <li>{@code direct-io.buffer-size} (2kb): size of each pooled aligned read buffer (rounded up to
 *       the file system block size); larger reads use a one-off buffer.
 *   <li>{@code direct-io.pool-max-size} (64): aligned buffers kept for reuse.
 *   <li>{@code snapshot.retention} (0): published shard snapshots kept (newest first, pinned ones
 *       extra); 0 keeps all.
 *   <li>{@code remote-cache.size} (4gb): bytes of remote data files a Db whose primary volume is
 *       object storage keeps on its local CACHE volume (files it wrote itself, and chunks of other
 *       files it read); least recently used data goes first.
 *   <li>{@code remote-cache.chunk-size} (64kb): remote reads that miss that cache fetch and keep
 *       whole aligned chunks of this size.
 * </ul>
 *
 * <p>The clock and custom merge operators are set on the builder only (they are code, not text).
 */
public final class Config {
  private static final Map<String, String> DEFAULTS = new LinkedHashMap<>();

  static {
    DEFAULTS.put("total-buckets", "1");
    DEFAULTS.put("bucket-ranges", "all");
    DEFAULTS.put("memtable.type", "adaptive");
    DEFAULTS.put("memtable.capacity", "32mb");
    DEFAULTS.put("memory.memtable-buffer-count", "2");
    DEFAULTS.put("compaction.policy", "score_priority");
    DEFAULTS.put("compaction.l0-file-limit", "2");
    DEFAULTS.put("compaction.write-stall-limit", "derived");
    DEFAULTS.put("compaction.threads", "4");
    DEFAULTS.put("compaction.read-ahead.enabled", "true");
    DEFAULTS.put("compaction.read-ahead.size", "2mb");
    DEFAULTS.put("compaction.level-base-size", "256mb");
    DEFAULTS.put("compaction.level-size-multiplier", "10");
    DEFAULTS.put("compaction.max-levels", "7");
    DEFAULTS.put("sst.target-file-size", "64mb");
    DEFAULTS.put("sst.block-size", "4kb");
    DEFAULTS.put("sst.block-restart-interval", "16");
    DEFAULTS.put("sst.bloom-filter.enabled", "true");
    DEFAULTS.put("sst.bloom-filter.bits-per-key", "10");
    DEFAULTS.put("sst.partitioned-index.enabled", "true");
    DEFAULTS.put("sst.pinned-metadata.max-level", "2");
    DEFAULTS.put("sst.pinned-metadata.partitions.enabled", "true");
    DEFAULTS.put("sst.read-metadata-cache.mode", "eager");
    DEFAULTS.put("sst.compression", "none,none,lz4");
    DEFAULTS.put("value-separation.threshold", "1kb");
    DEFAULTS.put("block-cache.size", "64mb");
    DEFAULTS.put("ttl.default", "0");
    DEFAULTS.put("fsync.enabled", "true");
    DEFAULTS.put("direct-io.enabled", "false");
    DEFAULTS.put("direct-io.buffer-size", "2kb");
    DEFAULTS.put("direct-io.pool-max-size", "64");
    DEFAULTS.put("snapshot.retention", "0");
    DEFAULTS.put("remote-cache.size", "4gb");
    DEFAULTS.put("remote-cache.chunk-size", "64kb");
  }

  private final Map<String, String> values;
  private final Clock clock;
  private final MergeOperatorResolver resolver;

  private final int totalBuckets;
  private final int snapshotRetention;
  private final int[] bucketRanges;
  private final MemTableType memtableType;
  private final long memtableCapacity;
  private final int memtableBufferCount;
  private final CompactionPolicy compactionPolicy;
  private final int l0FileLimit;
  private final int writeStallLimit;
  private final int compactionThreads;
  private final boolean readAheadEnabled;
  private final int readAheadSize;
  private final long levelBaseSize;
  private final int levelSizeMultiplier;
  private final int maxLevels;
  private final long targetFileSize;
  private final int blockSize;
  private final int blockRestartInterval;
  private final boolean bloomEnabled;
  private final int bloomBitsPerKey;
  private final boolean partitionedIndex;
  private final int pinnedMaxLevel;
  private final MetadataCacheMode metadataCacheMode;
  private final boolean pinPartitions;
  private final boolean[] lz4PerLevel;
  private final long valueSeparationThreshold;
  private final long blockCacheSize;
  private final long defaultTtlMillis;
  private final boolean directIoEnabled;
  private final boolean fsyncEnabled;
  private final int directIoBufferSize;
  private final int directIoPoolMaxSize;
  private final long remoteCacheSize;
  private final int remoteCacheChunkSize;

  private Config(Map<String, String> values, Clock clock, MergeOperatorResolver resolver) {
    this.values = Collections.unmodifiableMap(values);
    this.clock = clock;
    this.resolver = resolver;
    totalBuckets = intIn("total-buckets", 1, 65536);
    snapshotRetention = intIn("snapshot.retention", 0, 1_000_000);
    bucketRanges = parseRanges(get("bucket-ranges"), totalBuckets);
    memtableType = MemTableType.parse("memtable.type", get("memtable.type"));
    memtableCapacity = sizeIn("memtable.capacity", 4096, 1L << 30);
    memtableBufferCount = intIn("memory.memtable-buffer-count", 2, 64);
    compactionPolicy = CompactionPolicy.parse("compaction.policy", get("compaction.policy"));
    l0FileLimit = intIn("compaction.l0-file-limit", 1, 1000);
    String stall = get("compaction.write-stall-limit");
    if (stall.equalsIgnoreCase("derived")) {
      writeStallLimit = Math.max(l0FileLimit + 2, 32);
    } else {
      writeStallLimit = intIn("compaction.write-stall-limit", l0FileLimit + 2, 100_000);
    }
    compactionThreads = intIn("compaction.threads", 1, 256);
    readAheadEnabled = bool("compaction.read-ahead.enabled");
    readAheadSize = (int) sizeIn("compaction.read-ahead.size", 4096, 256L << 20);
    levelBaseSize = sizeIn("compaction.level-base-size", 1024, Long.MAX_VALUE / 1024);
    levelSizeMultiplier = intIn("compaction.level-size-multiplier", 2, 1000);
    maxLevels = intIn("compaction.max-levels", 2, 16);
    targetFileSize = sizeIn("sst.target-file-size", 1024, 4L << 30);
    blockSize = (int) sizeIn("sst.block-size", 256, 16L << 20);
    blockRestartInterval = intIn("sst.block-restart-interval", 1, 1024);
    bloomEnabled = bool("sst.bloom-filter.enabled");
    bloomBitsPerKey = intIn("sst.bloom-filter.bits-per-key", 1, 64);
    partitionedIndex = bool("sst.partitioned-index.enabled");
    pinnedMaxLevel = intIn("sst.pinned-metadata.max-level", -1, maxLevels - 1);
    pinPartitions = bool("sst.pinned-metadata.partitions.enabled");
    metadataCacheMode =
        MetadataCacheMode.parse(
            "sst.read-metadata-cache.mode", get("sst.read-metadata-cache.mode"));
    lz4PerLevel = parseCompression(get("sst.compression"), maxLevels);
    valueSeparationThreshold = sizeIn("value-separation.threshold", 0, 1L << 30);
    blockCacheSize = sizeIn("block-cache.size", 0, 1L << 40);
    defaultTtlMillis = durationMillis("ttl.default");
    directIoEnabled = bool("direct-io.enabled");
    fsyncEnabled = bool("fsync.enabled");
    directIoBufferSize = (int) sizeIn("direct-io.buffer-size", 512, 64L << 20);
    directIoPoolMaxSize = intIn("direct-io.pool-max-size", 0, 100_000);
    remoteCacheSize = sizeIn("remote-cache.size", 0, 1L << 50);
    remoteCacheChunkSize = (int) sizeIn("remote-cache.chunk-size", 4096, 64L << 20);
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

  /** The documented keys with their default values (derived values shown as "derived"). */
  public static Map<String, String> defaultValues() {
    return Collections.unmodifiableMap(DEFAULTS);
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.values.putAll(values);
    b.clock = clock;
    b.resolver = resolver;
    return b;
  }

  /** All keys with their effective textual values. */
  public Map<String, String> values() {
    return values;
  }

  private String get(String key) {
    return values.get(key);
  }

  private int intIn(String key, int min, int max) {
    long v;
    try {
      v = Long.parseLong(get(key).trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "invalid value '" + get(key) + "' for " + key + ": expected an integer");
    }
    if (v < min || v > max) {
      throw new IllegalArgumentException(
          "invalid value " + v + " for " + key + ": allowed range is " + min + ".." + max);
    }
    return (int) v;
  }

  private long sizeIn(String key, long min, long max) {
    long v = Sizes.parse(key, get(key));
    if (v < min || v > max) {
      throw new IllegalArgumentException(
          "invalid size '"
              + get(key)
              + "' for "
              + key
              + ": allowed range is "
              + min
              + ".."
              + max
              + " bytes");
    }
    return v;
  }

  private boolean bool(String key) {
    String v = get(key).trim().toLowerCase(Locale.ROOT);
    if (v.equals("true")) {
      return true;
    }
    if (v.equals("false")) {
      return false;
    }
    throw new IllegalArgumentException(
        "invalid value '" + get(key) + "' for " + key + ": allowed are true, false");
  }

  private long durationMillis(String key) {
    String s = get(key).trim().toLowerCase(Locale.ROOT);
    long mult = 1;
    String num = s;
    if (s.endsWith("ms")) {
      num = s.substring(0, s.length() - 2);
    } else if (s.endsWith("s")) {
      mult = 1000;
      num = s.substring(0, s.length() - 1);
    } else if (s.endsWith("m")) {
      mult = 60_000;
      num = s.substring(0, s.length() - 1);
    } else if (s.endsWith("h")) {
      mult = 3_600_000;
      num = s.substring(0, s.length() - 1);
    } else if (s.endsWith("d")) {
      mult = 86_400_000;
      num = s.substring(0, s.length() - 1);
    }
    try {
      long v = Long.parseLong(num.trim());
      if (v < 0) {
        throw new NumberFormatException();
      }
      return Math.multiplyExact(v, mult);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(
          "invalid duration '"
              + get(key)
              + "' for "
              + key
              + ": expected a non-negative number with optional unit ms, s, m, h, d");
    }
  }

  private static int[] parseRanges(String text, int totalBuckets) {
    String key = "bucket-ranges";
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

  private static boolean[] parseCompression(String text, int maxLevels) {
    String[] parts = text.split(",");
    boolean[] lz4 = new boolean[maxLevels];
    for (int level = 0; level < maxLevels; level++) {
      String p = parts[Math.min(level, parts.length - 1)].trim().toLowerCase(Locale.ROOT);
      if (p.equals("lz4")) {
        lz4[level] = true;
      } else if (!p.equals("none")) {
        throw new IllegalArgumentException(
            "invalid compression '"
                + p
                + "' in sst.compression: allowed are none, lz4 (comma-separated per level)");
      }
    }
    return lz4;
  }

  public Clock clock() {
    return clock;
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

  public int blockRestartInterval() {
    return blockRestartInterval;
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

  public boolean lz4ForLevel(int level) {
    return lz4PerLevel[Math.min(level, lz4PerLevel.length - 1)];
  }

  public long valueSeparationThreshold() {
    return valueSeparationThreshold;
  }

  public long blockCacheSize() {
    return blockCacheSize;
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

  public boolean directIoEnabled() {
    return directIoEnabled;
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
      return new Config(new LinkedHashMap<>(values), clock, resolver);
    }
  }
}
