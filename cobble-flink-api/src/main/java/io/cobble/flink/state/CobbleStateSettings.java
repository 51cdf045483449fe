package io.cobble.flink.state;

import static io.cobble.flink.state.CobbleStateBackendOptions.ASYNC_READ_THREADS;
import static io.cobble.flink.state.CobbleStateBackendOptions.ASYNC_WRITE_THREADS;
import static io.cobble.flink.state.CobbleStateBackendOptions.BLOOM_FILTER_BITS_PER_KEY;
import static io.cobble.flink.state.CobbleStateBackendOptions.BLOOM_FILTER_ENABLED;
import static io.cobble.flink.state.CobbleStateBackendOptions.COMPACTION_DEDICATED_ORPHAN_MIN_AGE;
import static io.cobble.flink.state.CobbleStateBackendOptions.COMPACTION_DEDICATED_POLL_INTERVAL;
import static io.cobble.flink.state.CobbleStateBackendOptions.COMPACTION_L0_FILE_LIMIT;
import static io.cobble.flink.state.CobbleStateBackendOptions.COMPACTION_MODE;
import static io.cobble.flink.state.CobbleStateBackendOptions.COMPACTION_POLICY;
import static io.cobble.flink.state.CobbleStateBackendOptions.COMPACTION_READ_AHEAD;
import static io.cobble.flink.state.CobbleStateBackendOptions.COMPACTION_REMOTE_ADDRESS;
import static io.cobble.flink.state.CobbleStateBackendOptions.COMPACTION_REMOTE_TIMEOUT;
import static io.cobble.flink.state.CobbleStateBackendOptions.COMPACTION_THREADS;
import static io.cobble.flink.state.CobbleStateBackendOptions.COMPACTION_WRITE_STALL_LIMIT;
import static io.cobble.flink.state.CobbleStateBackendOptions.DIRECT_IO_BUFFER_SIZE;
import static io.cobble.flink.state.CobbleStateBackendOptions.DIRECT_IO_POOL_MAX_SIZE;
import static io.cobble.flink.state.CobbleStateBackendOptions.LOCAL_DIRECTORIES;
import static io.cobble.flink.state.CobbleStateBackendOptions.LOCAL_PRIMARY_HIGH_PRIORITY;
import static io.cobble.flink.state.CobbleStateBackendOptions.LOG_KEEP_FILES;
import static io.cobble.flink.state.CobbleStateBackendOptions.LOG_LEVEL;
import static io.cobble.flink.state.CobbleStateBackendOptions.LOG_MAX_FILE_SIZE;
import static io.cobble.flink.state.CobbleStateBackendOptions.MEMORY_FIXED_PER_SLOT;
import static io.cobble.flink.state.CobbleStateBackendOptions.MEMORY_MANAGED;
import static io.cobble.flink.state.CobbleStateBackendOptions.MEMTABLE_BUFFER_COUNT;
import static io.cobble.flink.state.CobbleStateBackendOptions.MEMTABLE_BUFFER_RATIO;
import static io.cobble.flink.state.CobbleStateBackendOptions.MEMTABLE_TYPE;
import static io.cobble.flink.state.CobbleStateBackendOptions.PARTITIONED_INDEX_ENABLED;
import static io.cobble.flink.state.CobbleStateBackendOptions.PINNED_METADATA_MAX_LEVEL;
import static io.cobble.flink.state.CobbleStateBackendOptions.PINNED_METADATA_PARTITIONS;
import static io.cobble.flink.state.CobbleStateBackendOptions.READ_METADATA_CACHE_MODE;
import static io.cobble.flink.state.CobbleStateBackendOptions.SNAPSHOT_RETENTION;
import static io.cobble.flink.state.CobbleStateBackendOptions.TIMER_SERVICE;
import static io.cobble.flink.state.CobbleStateBackendOptions.VALUE_SEPARATION_THRESHOLD;
import static io.cobble.flink.state.CobbleStateBackendOptions.VLOG_LOW_PRIORITY_PRIMARY;

import io.cobble.Config;
import java.io.Serializable;
import java.net.URI;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.TaskManagerOptions;

/**
 * The validated {@code state.backend.cobble.*} settings of one backend. Immutable and serializable,
 * because Flink ships the configured backend to every task.
 *
 * <p>Per-job settings: the factory reads the cluster configuration; a job's own configuration
 * overrides it key by key through {@link #fromConfig(ReadableConfig, ReadableConfig)}, as Flink's
 * RocksDB backend does in {@code configure}.
 *
 * <p>Later work: {@code compaction.mode} REMOTE or DEDICATED (also REMOTE selected by {@code
 * compaction.remote.addr} alone) is validated in full and then rejected as not available yet.
 * {@code async.*} values are validated and kept for the asynchronous (Flink 2.x) backend.
 */
public final class CobbleStateSettings implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Budget of one backend when neither managed nor fixed memory is configured. */
  static final long UNMANAGED_BUDGET_BYTES = 128L << 20;

  private static final String[] MEMTABLE_TYPES = {"adaptive", "skiplist", "hash", "vec"};
  private static final String[] COMPACTION_POLICIES = {
    "round_robin", "min_overlap", "score_priority"
  };
  private static final String[] COMPACTION_MODES = {"LOCAL", "REMOTE", "DEDICATED"};
  private static final String[] METADATA_CACHE_MODES = {"EAGER", "LAZY", "OFF"};
  private static final String[] LOG_LEVELS = {"trace", "debug", "info", "warn", "error", "off"};

  private final List<String> localDirs;
  private final boolean localPrimaryHighPriority;
  private final TimerServiceKind timerService;
  private final boolean memoryManaged;
  private final long fixedPerSlotBytes;
  private final double memtableBufferRatio;
  private final int memtableBufferCount;
  private final String memtableType;
  private final String compactionPolicy;
  private final int l0FileLimit;
  private final int writeStallLimit;
  private final boolean readAheadEnabled;
  private final int compactionThreads;
  private final int asyncReadThreads;
  private final int asyncWriteThreads;
  private final boolean bloomFilterEnabled;
  private final int bloomBitsPerKey;
  private final boolean partitionedIndex;
  private final String metadataCacheMode;
  private final int pinnedMetadataMaxLevel;
  private final boolean pinnedPartitions;
  private final long valueSeparationThreshold;
  private final boolean vlogLowPriorityPrimary;
  private final long directIoBufferSize;
  private final int directIoPoolMaxSize;
  private final long logMaxFileSize;
  private final int logKeepFiles;
  private final String logLevel;
  private final int taskSlots;

  private CobbleStateSettings(StateOptionReader in) {
    localDirs = parseLocalDirs(in);
    localPrimaryHighPriority = in.bool(LOCAL_PRIMARY_HIGH_PRIORITY);
    timerService =
        TimerServiceKind.valueOf(in.choice(TIMER_SERVICE, names(TimerServiceKind.values())));
    memoryManaged = in.bool(MEMORY_MANAGED);
    fixedPerSlotBytes =
        in.isSet(MEMORY_FIXED_PER_SLOT) ? in.bytesIn(MEMORY_FIXED_PER_SLOT, 1L << 20, 1L << 40) : 0;
    memtableBufferRatio = in.ratioExclusive(MEMTABLE_BUFFER_RATIO);
    memtableBufferCount = in.intIn(MEMTABLE_BUFFER_COUNT, 2, 64);
    memtableType = in.choice(MEMTABLE_TYPE, MEMTABLE_TYPES);
    compactionPolicy = in.choice(COMPACTION_POLICY, COMPACTION_POLICIES);
    l0FileLimit = in.intIn(COMPACTION_L0_FILE_LIMIT, 1, 1000);
    writeStallLimit = parseWriteStallLimit(in, l0FileLimit);
    readAheadEnabled = in.bool(COMPACTION_READ_AHEAD);
    compactionThreads = in.intIn(COMPACTION_THREADS, 1, 256);
    asyncReadThreads = in.intIn(ASYNC_READ_THREADS, 1, 256);
    asyncWriteThreads = in.intIn(ASYNC_WRITE_THREADS, 1, 256);
    bloomFilterEnabled = in.bool(BLOOM_FILTER_ENABLED);
    bloomBitsPerKey = in.intIn(BLOOM_FILTER_BITS_PER_KEY, 1, 64);
    partitionedIndex = in.bool(PARTITIONED_INDEX_ENABLED);
    metadataCacheMode = in.choice(READ_METADATA_CACHE_MODE, METADATA_CACHE_MODES);
    pinnedMetadataMaxLevel = in.intIn(PINNED_METADATA_MAX_LEVEL, -1, 6);
    pinnedPartitions = in.bool(PINNED_METADATA_PARTITIONS);
    valueSeparationThreshold = in.bytesIn(VALUE_SEPARATION_THRESHOLD, 0, 1L << 30);
    vlogLowPriorityPrimary = in.bool(VLOG_LOW_PRIORITY_PRIMARY);
    directIoBufferSize = in.bytesIn(DIRECT_IO_BUFFER_SIZE, 512, 64L << 20);
    directIoPoolMaxSize = in.intIn(DIRECT_IO_POOL_MAX_SIZE, 0, 100_000);
    logMaxFileSize = in.bytesIn(LOG_MAX_FILE_SIZE, 1L << 10, 1L << 40);
    taskSlots = in.intIn(TaskManagerOptions.NUM_TASK_SLOTS, 1, Integer.MAX_VALUE);
    logKeepFiles = in.intIn(LOG_KEEP_FILES, 1, 10_000);
    logLevel = in.choice(LOG_LEVEL, LOG_LEVELS);
    in.optionalIntIn(SNAPSHOT_RETENTION, 1, 1_000_000)
        .ifPresent(
            n -> {
              throw new IllegalConfigurationException(
                  SNAPSHOT_RETENTION.key()
                      + " is not supported by the Cobble state backend: Flink decides which"
                      + " checkpoints are retained, and Cobble's files live exactly as long as a"
                      + " retained checkpoint references them. Remove "
                      + SNAPSHOT_RETENTION.key()
                      + " and set state.checkpoints.num-retained (Flink 1.17 to 1.19) or"
                      + " execution.checkpointing.num-retained (Flink 1.20 and later) instead.");
            });
    checkCompactionMode(in);
  }

  /** Reads and validates every {@code state.backend.cobble.*} key of {@code config}. */
  public static CobbleStateSettings fromConfig(ReadableConfig config) {
    return new CobbleStateSettings(new StateOptionReader(config));
  }

  /**
   * The settings of one job: each key the job's configuration sets overrides the cluster's value.
   */
  public static CobbleStateSettings fromConfig(ReadableConfig cluster, ReadableConfig job) {
    Configuration layered = new Configuration();
    List<ConfigOption<?>> options = new ArrayList<>(CobbleStateBackendOptions.all());
    options.add(TaskManagerOptions.NUM_TASK_SLOTS);
    for (ConfigOption<?> option : options) {
      ConfigOption<String> text = ConfigOptions.key(option.key()).stringType().noDefaultValue();
      Optional<String> value = job.getOptional(text);
      if (!value.isPresent()) {
        value = cluster.getOptional(text);
      }
      value.ifPresent(v -> layered.set(text, v));
    }
    return fromConfig(layered);
  }

  /** The configured local directories; empty means the TaskManager's temporary directories. */
  public List<Path> localDirs() {
    List<Path> dirs = new ArrayList<>();
    localDirs.forEach(d -> dirs.add(Paths.get(d)));
    return Collections.unmodifiableList(dirs);
  }

  /**
   * The engine configuration for a backend with {@code memoryBudgetBytes} of memory: memtables get
   * {@code memtable-buffer-ratio} of it, split evenly into {@code memtable-buffer-count} buffers,
   * the block cache gets the rest.
   */
  public Config engineConfig(long memoryBudgetBytes) {
    return EngineConfigMapping.toEngineConfig(this, memoryBudgetBytes);
  }

  /**
   * The memory budget of one backend: {@code memory.fixed-per-slot} when set, otherwise the managed
   * memory Flink gave it (when {@code memory.managed}), otherwise a fixed 128 MB.
   *
   * @throws IllegalConfigurationException when managed memory is used and Flink gave none
   */
  public long memoryBudget(long managedMemoryBytes) {
    if (fixedPerSlotBytes > 0) {
      return fixedPerSlotBytes;
    }
    if (!memoryManaged) {
      return UNMANAGED_BUDGET_BYTES;
    }
    if (managedMemoryBytes <= 0) {
      throw new IllegalConfigurationException(
          "The Cobble state backend got no managed memory ("
              + MEMORY_MANAGED.key()
              + " is true): give the TaskManager managed memory"
              + " (taskmanager.memory.managed.size or .fraction), or set "
              + MEMORY_FIXED_PER_SLOT.key()
              + ", or set "
              + MEMORY_MANAGED.key()
              + " to false.");
    }
    return managedMemoryBytes;
  }

  public TimerServiceKind timerService() {
    return timerService;
  }

  public boolean localPrimaryHighPriority() {
    return localPrimaryHighPriority;
  }

  /**
   * The TaskManager's slot count ({@code taskmanager.numberOfTaskSlots}): the slots' memory pools
   * share one JVM heap.
   */
  int taskSlots() {
    return taskSlots;
  }

  public boolean memoryManaged() {
    return memoryManaged;
  }

  /** {@code memory.fixed-per-slot} in bytes; 0 when unset. */
  long fixedPerSlotBytes() {
    return fixedPerSlotBytes;
  }

  /** Placement of new value-log files on the slowest tier; applied by the backend's volumes. */
  public boolean vlogLowPriorityPrimary() {
    return vlogLowPriorityPrimary;
  }

  /** Threads for asynchronous state reads (Flink 2.x async state). */
  public int asyncReadThreads() {
    return asyncReadThreads;
  }

  /** Threads for asynchronous state writes (Flink 2.x async state). */
  public int asyncWriteThreads() {
    return asyncWriteThreads;
  }

  double memtableBufferRatio() {
    return memtableBufferRatio;
  }

  int memtableBufferCount() {
    return memtableBufferCount;
  }

  String memtableType() {
    return memtableType;
  }

  String compactionPolicy() {
    return compactionPolicy;
  }

  int l0FileLimit() {
    return l0FileLimit;
  }

  /** 0 when unset: the engine derives it. */
  int writeStallLimit() {
    return writeStallLimit;
  }

  boolean readAheadEnabled() {
    return readAheadEnabled;
  }

  int compactionThreads() {
    return compactionThreads;
  }

  boolean bloomFilterEnabled() {
    return bloomFilterEnabled;
  }

  int bloomBitsPerKey() {
    return bloomBitsPerKey;
  }

  boolean partitionedIndex() {
    return partitionedIndex;
  }

  String metadataCacheMode() {
    return metadataCacheMode;
  }

  int pinnedMetadataMaxLevel() {
    return pinnedMetadataMaxLevel;
  }

  boolean pinnedPartitions() {
    return pinnedPartitions;
  }

  long valueSeparationThreshold() {
    return valueSeparationThreshold;
  }

  long directIoBufferSize() {
    return directIoBufferSize;
  }

  int directIoPoolMaxSize() {
    return directIoPoolMaxSize;
  }

  /** Validated only: Cobble logs into the TaskManager log, which Flink's logging rolls. */
  long logMaxFileSize() {
    return logMaxFileSize;
  }

  /** Validated only, like {@link #logMaxFileSize()}. */
  int logKeepFiles() {
    return logKeepFiles;
  }

  /** Validated only: the level of logger {@code io.cobble} is set in Flink's logging config. */
  String logLevel() {
    return logLevel;
  }

  private static List<String> parseLocalDirs(StateOptionReader in) {
    Optional<String> text = in.optionalString(LOCAL_DIRECTORIES);
    if (!text.isPresent()) {
      return Collections.emptyList();
    }
    List<String> dirs = new ArrayList<>();
    for (String part : text.get().split(",")) {
      String entry = part.trim();
      Path dir;
      try {
        dir = entry.startsWith("file:") ? Paths.get(URI.create(entry)) : Paths.get(entry);
      } catch (RuntimeException e) {
        throw in.invalid(LOCAL_DIRECTORIES, "'" + entry + "' is not a local path");
      }
      if (entry.isEmpty() || !dir.isAbsolute()) {
        throw in.invalid(
            LOCAL_DIRECTORIES,
            "expected absolute local paths (or file: URIs) separated by ',', got '" + entry + "'");
      }
      dirs.add(dir.normalize().toString());
    }
    return Collections.unmodifiableList(dirs);
  }

  private static int parseWriteStallLimit(StateOptionReader in, int l0FileLimit) {
    Optional<Integer> limit = in.optionalIntIn(COMPACTION_WRITE_STALL_LIMIT, 1, 100_000);
    if (limit.isPresent() && limit.get() < l0FileLimit + 2) {
      throw in.invalid(
          COMPACTION_WRITE_STALL_LIMIT,
          "must be at least " + COMPACTION_L0_FILE_LIMIT.key() + " + 2 = " + (l0FileLimit + 2));
    }
    return limit.orElse(0);
  }

  /** Validates every compaction-service key, then rejects the modes not built yet. */
  private static void checkCompactionMode(StateOptionReader in) {
    boolean modeSet = in.isSet(COMPACTION_MODE);
    String mode = in.choice(COMPACTION_MODE, COMPACTION_MODES);
    Optional<String> address = in.optionalString(COMPACTION_REMOTE_ADDRESS);
    address.ifPresent(a -> checkHostPort(in, a));
    in.positiveDuration(COMPACTION_REMOTE_TIMEOUT);
    in.positiveDuration(COMPACTION_DEDICATED_POLL_INTERVAL);
    in.positiveDuration(COMPACTION_DEDICATED_ORPHAN_MIN_AGE);
    if (!modeSet && address.isPresent()) {
      mode = "REMOTE";
    }
    switch (mode) {
      case "LOCAL":
        if (address.isPresent()) {
          throw new IllegalConfigurationException(
              COMPACTION_REMOTE_ADDRESS.key()
                  + " is set but "
                  + COMPACTION_MODE.key()
                  + " is LOCAL: remove the address or choose REMOTE.");
        }
        for (ConfigOption<Duration> later :
            Arrays.asList(
                COMPACTION_REMOTE_TIMEOUT,
                COMPACTION_DEDICATED_POLL_INTERVAL,
                COMPACTION_DEDICATED_ORPHAN_MIN_AGE)) {
          if (in.isSet(later)) {
            throw new IllegalConfigurationException(
                later.key()
                    + " is set, but remote and dedicated compaction are not available yet in this"
                    + " Cobble release; compaction runs in the TaskManager ("
                    + COMPACTION_MODE.key()
                    + ": LOCAL). Remove "
                    + later.key()
                    + ".");
          }
        }
        return;
      case "REMOTE":
        if (!address.isPresent()) {
          throw new IllegalConfigurationException(
              COMPACTION_MODE.key()
                  + " REMOTE needs "
                  + COMPACTION_REMOTE_ADDRESS.key()
                  + " (host:port of the compactor).");
        }
        throw notAvailable(
            "Remote compaction ("
                + (modeSet ? COMPACTION_MODE.key() + ": REMOTE" : COMPACTION_REMOTE_ADDRESS.key())
                + ")");
      default:
        throw notAvailable("Dedicated compaction (" + COMPACTION_MODE.key() + ": DEDICATED)");
    }
  }

  private static IllegalConfigurationException notAvailable(String what) {
    return new IllegalConfigurationException(
        what
            + " is not available yet in this Cobble release; set "
            + COMPACTION_MODE.key()
            + " to LOCAL (the default) and leave "
            + COMPACTION_REMOTE_ADDRESS.key()
            + " unset.");
  }

  private static void checkHostPort(StateOptionReader in, String address) {
    int colon = address.lastIndexOf(':');
    boolean valid = colon > 0 && colon < address.length() - 1;
    if (valid) {
      try {
        int port = Integer.parseInt(address.substring(colon + 1));
        valid = port >= 1 && port <= 65535;
      } catch (NumberFormatException e) {
        valid = false;
      }
    }
    if (!valid) {
      throw in.invalid(COMPACTION_REMOTE_ADDRESS, "expected host:port with a port in 1..65535");
    }
  }

  private static String[] names(Enum<?>[] values) {
    String[] names = new String[values.length];
    for (int i = 0; i < values.length; i++) {
      names[i] = values[i].name();
    }
    return names;
  }
}
