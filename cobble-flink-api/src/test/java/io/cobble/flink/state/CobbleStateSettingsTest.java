package io.cobble.flink.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.junit.jupiter.api.Test;

/**
 * Every {@code state.backend.cobble.*} key: its default, a valid value and each rejection with the
 * message a user sees. Engine-mapped keys are observed in the engine {@link Config} they produce.
 */
class CobbleStateSettingsTest {
  private static final String P = "state.backend.cobble.";
  private static final long BUDGET = 128L << 20;

  // ---- options class ----

  @Test
  void everyDeclaredOptionIsListedWithThePrefixAndADescription() throws Exception {
    List<ConfigOption<?>> declared = new ArrayList<>();
    for (Field f : CobbleStateBackendOptions.class.getDeclaredFields()) {
      if (Modifier.isPublic(f.getModifiers()) && f.getType() == ConfigOption.class) {
        declared.add((ConfigOption<?>) f.get(null));
      }
    }
    assertEquals(34, declared.size());
    assertEquals(declared, CobbleStateBackendOptions.all());
    for (ConfigOption<?> option : declared) {
      assertTrue(option.key().startsWith(P), option.key());
      assertFalse(option.description().toString().isEmpty(), option.key());
    }
  }

  @Test
  void optionDefaultsAreTheDocumentedOnes() {
    assertEquals(true, CobbleStateBackendOptions.LOCAL_PRIMARY_HIGH_PRIORITY.defaultValue());
    assertEquals("COBBLE", CobbleStateBackendOptions.TIMER_SERVICE.defaultValue());
    assertEquals(true, CobbleStateBackendOptions.MEMORY_MANAGED.defaultValue());
    assertEquals(0.5, CobbleStateBackendOptions.MEMTABLE_BUFFER_RATIO.defaultValue());
    assertEquals(2, CobbleStateBackendOptions.MEMTABLE_BUFFER_COUNT.defaultValue());
    assertEquals("adaptive", CobbleStateBackendOptions.MEMTABLE_TYPE.defaultValue());
    assertEquals("score_priority", CobbleStateBackendOptions.COMPACTION_POLICY.defaultValue());
    assertEquals(2, CobbleStateBackendOptions.COMPACTION_L0_FILE_LIMIT.defaultValue());
    assertEquals(true, CobbleStateBackendOptions.COMPACTION_READ_AHEAD.defaultValue());
    assertEquals("LOCAL", CobbleStateBackendOptions.COMPACTION_MODE.defaultValue());
    assertEquals(
        Duration.ofSeconds(300),
        CobbleStateBackendOptions.COMPACTION_REMOTE_TIMEOUT.defaultValue());
    assertEquals(4, CobbleStateBackendOptions.COMPACTION_THREADS.defaultValue());
    assertEquals(
        Duration.ofSeconds(1),
        CobbleStateBackendOptions.COMPACTION_DEDICATED_POLL_INTERVAL.defaultValue());
    assertEquals(
        Duration.ofMinutes(5),
        CobbleStateBackendOptions.COMPACTION_DEDICATED_ORPHAN_MIN_AGE.defaultValue());
    assertEquals(4, CobbleStateBackendOptions.ASYNC_READ_THREADS.defaultValue());
    assertEquals(1, CobbleStateBackendOptions.ASYNC_WRITE_THREADS.defaultValue());
    assertEquals(true, CobbleStateBackendOptions.BLOOM_FILTER_ENABLED.defaultValue());
    assertEquals(10, CobbleStateBackendOptions.BLOOM_FILTER_BITS_PER_KEY.defaultValue());
    assertEquals(true, CobbleStateBackendOptions.PARTITIONED_INDEX_ENABLED.defaultValue());
    assertEquals("EAGER", CobbleStateBackendOptions.READ_METADATA_CACHE_MODE.defaultValue());
    assertEquals(2, CobbleStateBackendOptions.PINNED_METADATA_MAX_LEVEL.defaultValue());
    assertEquals(true, CobbleStateBackendOptions.PINNED_METADATA_PARTITIONS.defaultValue());
    assertEquals(
        MemorySize.parse("1kb"),
        CobbleStateBackendOptions.VALUE_SEPARATION_THRESHOLD.defaultValue());
    assertEquals(false, CobbleStateBackendOptions.VLOG_LOW_PRIORITY_PRIMARY.defaultValue());
    assertEquals(
        MemorySize.parse("2kb"), CobbleStateBackendOptions.DIRECT_IO_BUFFER_SIZE.defaultValue());
    assertEquals(64, CobbleStateBackendOptions.DIRECT_IO_POOL_MAX_SIZE.defaultValue());
    assertEquals(
        MemorySize.parse("10mb"), CobbleStateBackendOptions.LOG_MAX_FILE_SIZE.defaultValue());
    assertEquals(3, CobbleStateBackendOptions.LOG_KEEP_FILES.defaultValue());
    assertEquals("info", CobbleStateBackendOptions.LOG_LEVEL.defaultValue());
    for (ConfigOption<?> unset :
        List.of(
            CobbleStateBackendOptions.LOCAL_DIRECTORIES,
            CobbleStateBackendOptions.MEMORY_FIXED_PER_SLOT,
            CobbleStateBackendOptions.COMPACTION_WRITE_STALL_LIMIT,
            CobbleStateBackendOptions.COMPACTION_REMOTE_ADDRESS,
            CobbleStateBackendOptions.SNAPSHOT_RETENTION)) {
      assertFalse(unset.hasDefaultValue(), unset.key());
    }
  }

  /**
   * Every key, set to a valid non-default value, either changes what the backend uses (the engine
   * configuration or a setting the backend reads) or is refused at creation: none is silently
   * ignored. The table must cover every declared key, so a new option needs a decision here.
   */
  @Test
  void everyOptionIsUsedOrRejected() {
    Map<String, String> used = new java.util.LinkedHashMap<>();
    used.put("memory.memtable-buffer-ratio", "0.25");
    used.put("memory.memtable-buffer-count", "4");
    used.put("memtable.type", "hash");
    used.put("compaction.policy", "round_robin");
    used.put("compaction.l0-file-limit", "4");
    used.put("compaction.write-stall-limit", "40");
    used.put("compaction.read-ahead.enabled", "false");
    used.put("compaction.threads", "2");
    used.put("sst.bloom-filter.enabled", "false");
    used.put("sst.bloom-filter.bits-per-key", "12");
    used.put("sst.partitioned-index.enabled", "false");
    used.put("sst.read-metadata-cache.mode", "LAZY");
    used.put("sst.pinned-metadata.max-level", "1");
    used.put("sst.pinned-metadata.partitions.enabled", "false");
    used.put("value-separation.threshold", "4kb");
    used.put("direct-io.buffer-size", "4kb");
    used.put("direct-io.pool-max-size", "8");
    Map<String, java.util.function.Predicate<CobbleStateSettings>> backend =
        new java.util.LinkedHashMap<>();
    backend.put("localdir=/data/x", x -> x.localDirs().equals(List.of(Paths.get("/data/x"))));
    backend.put("localdir.primary-high-priority=false", x -> !x.localPrimaryHighPriority());
    backend.put("timer-service.factory=HEAP", x -> x.timerService() == TimerServiceKind.HEAP);
    backend.put("memory.managed=false", x -> x.memoryBudget(300L << 20) == 128L << 20);
    backend.put("memory.fixed-per-slot=32mb", x -> x.memoryBudget(300L << 20) == 32L << 20);
    backend.put("vlog.low-priority-primary.enabled=true", x -> x.vlogLowPriorityPrimary());
    // Kept for the Flink 2.x asynchronous backend (documented as such; not built yet).
    backend.put("async.read-threads=8", x -> x.asyncReadThreads() == 8);
    backend.put("async.write-threads=2", x -> x.asyncWriteThreads() == 2);
    // Documented as validated only: Cobble logs into the TaskManager log, which Flink configures.
    backend.put("log.max-file-size=1mb", x -> x.logMaxFileSize() == 1L << 20);
    backend.put("log.keep-files=5", x -> x.logKeepFiles() == 5);
    backend.put("log.level=debug", x -> x.logLevel().equals("debug"));
    Map<String, String> rejected = new java.util.LinkedHashMap<>();
    rejected.put("compaction.mode", "DEDICATED");
    rejected.put("compaction.remote.addr", "h:1");
    rejected.put("compaction.remote.timeout", "30s");
    rejected.put("compaction.dedicated.poll-interval", "2s");
    rejected.put("compaction.dedicated.orphan-min-age", "10min");
    rejected.put("snapshot.retention", "3");

    List<String> covered = new ArrayList<>(used.keySet());
    backend.keySet().forEach(k -> covered.add(k.substring(0, k.indexOf('='))));
    covered.addAll(rejected.keySet());
    for (ConfigOption<?> option : CobbleStateBackendOptions.all()) {
      assertTrue(covered.contains(option.key().substring(P.length())), option.key());
    }
    assertEquals(CobbleStateBackendOptions.all().size(), covered.size());

    Map<String, String> defaults = engine();
    for (Map.Entry<String, String> e : used.entrySet()) {
      assertFalse(
          defaults.equals(engine(e.getKey(), e.getValue())),
          e.getKey() + " changes the engine configuration");
    }
    for (Map.Entry<String, java.util.function.Predicate<CobbleStateSettings>> e :
        backend.entrySet()) {
      String[] kv = e.getKey().split("=", 2);
      assertFalse(e.getValue().test(settings()), e.getKey() + " differs from the default");
      assertTrue(e.getValue().test(settings(kv[0], kv[1])), e.getKey());
    }
    for (Map.Entry<String, String> e : rejected.entrySet()) {
      String message = rejection(e.getKey(), e.getValue());
      assertTrue(message.contains(P + e.getKey()), message);
      assertTrue(
          message.contains("not available yet") || message.contains("not supported"), message);
    }
  }

  // ---- directories, timers, retention ----

  @Test
  void localdir() {
    assertEquals(List.of(), settings().localDirs());
    assertEquals(
        List.of(Paths.get("/data/a"), Paths.get("/data/b")),
        settings("localdir", "/data/a, file:///data/b/").localDirs());
    assertRejected(
        "localdir",
        "relative/dir",
        "Invalid value 'relative/dir' for state.backend.cobble.localdir: expected absolute local"
            + " paths (or file: URIs) separated by ',', got 'relative/dir'.");
    assertRejected(
        "localdir",
        "/a,,/b",
        "Invalid value '/a,,/b' for state.backend.cobble.localdir: expected absolute local paths"
            + " (or file: URIs) separated by ',', got ''.");
    assertRejected(
        "localdir",
        "file://host/x",
        "Invalid value 'file://host/x' for state.backend.cobble.localdir: 'file://host/x' is not"
            + " a local path.");
  }

  @Test
  void localdirPrimaryHighPriority() {
    assertTrue(settings().localPrimaryHighPriority());
    assertFalse(settings("localdir.primary-high-priority", "FALSE").localPrimaryHighPriority());
    assertRejected(
        "localdir.primary-high-priority",
        "yes",
        "Invalid value 'yes' for state.backend.cobble.localdir.primary-high-priority: allowed"
            + " values are true, false.");
  }

  @Test
  void timerServiceFactory() {
    assertEquals(TimerServiceKind.COBBLE, settings().timerService());
    assertEquals(TimerServiceKind.HEAP, settings("timer-service.factory", "heap").timerService());
    assertEquals(
        TimerServiceKind.COBBLE, settings("timer-service.factory", " Cobble ").timerService());
    assertRejected(
        "timer-service.factory",
        "ROCKSDB",
        "Invalid value 'ROCKSDB' for state.backend.cobble.timer-service.factory: allowed values"
            + " are COBBLE, HEAP.");
  }

  @Test
  void snapshotRetentionIsRejectedBecauseFlinkRetainsCheckpoints() {
    assertEquals("0", engine().get("snapshot.retention"));
    assertRejected(
        "snapshot.retention",
        "5",
        "state.backend.cobble.snapshot.retention is not supported by the Cobble state backend:"
            + " Flink decides which checkpoints are retained, and Cobble's files live exactly as"
            + " long as a retained checkpoint references them. Remove"
            + " state.backend.cobble.snapshot.retention and set state.checkpoints.num-retained"
            + " (Flink 1.17 to 1.19) or execution.checkpointing.num-retained (Flink 1.20 and"
            + " later) instead.");
    assertRejected(
        "snapshot.retention",
        "0",
        "Invalid value '0' for state.backend.cobble.snapshot.retention: allowed range is"
            + " 1..1000000.");
    assertRejected(
        "snapshot.retention",
        "many",
        "Invalid value 'many' for state.backend.cobble.snapshot.retention: expected an integer in"
            + " 1..1000000.");
  }

  // ---- memory ----

  @Test
  void memoryManagedIsTheDefaultBudget() {
    assertTrue(settings().memoryManaged());
    assertEquals(300L << 20, settings().memoryBudget(300L << 20));
    IllegalConfigurationException none =
        assertThrows(IllegalConfigurationException.class, () -> settings().memoryBudget(0));
    assertEquals(
        "The Cobble state backend got no managed memory (state.backend.cobble.memory.managed is"
            + " true): give the TaskManager managed memory (taskmanager.memory.managed.size or"
            + " .fraction), or set state.backend.cobble.memory.fixed-per-slot, or set"
            + " state.backend.cobble.memory.managed to false.",
        none.getMessage());
    CobbleStateSettings unmanaged = settings("memory.managed", "false");
    assertEquals(128L << 20, unmanaged.memoryBudget(0));
    assertEquals(128L << 20, unmanaged.memoryBudget(300L << 20));
    assertRejected(
        "memory.managed",
        "1",
        "Invalid value '1' for state.backend.cobble.memory.managed: allowed values are true,"
            + " false.");
  }

  @Test
  void memoryFixedPerSlotOverridesManagedMemory() {
    assertEquals(64L << 20, settings("memory.fixed-per-slot", "64mb").memoryBudget(300L << 20));
    assertEquals(
        1L << 30,
        settings("memory.fixed-per-slot", "1g", "memory.managed", "false").memoryBudget(0));
    assertRejected(
        "memory.fixed-per-slot",
        "100kb",
        "Invalid value '100kb' for state.backend.cobble.memory.fixed-per-slot: allowed range is"
            + " 1mb..1024gb.");
    assertRejected(
        "memory.fixed-per-slot",
        "lots",
        "Invalid value 'lots' for state.backend.cobble.memory.fixed-per-slot: expected a size"
            + " such as 64mb in 1mb..1024gb.");
  }

  @Test
  void theBudgetIsSplitByRatioAndCount() {
    Config defaults = settings().engineConfig(BUDGET);
    assertEquals(32L << 20, defaults.memtableCapacity());
    assertEquals(2, defaults.memtableBufferCount());
    assertEquals(64L << 20, defaults.blockCacheSize());

    Config custom =
        settings("memory.memtable-buffer-ratio", "0.25", "memory.memtable-buffer-count", "4")
            .engineConfig(BUDGET);
    assertEquals(8L << 20, custom.memtableCapacity());
    assertEquals(4, custom.memtableBufferCount());
    assertEquals(96L << 20, custom.blockCacheSize());

    Config huge = settings().engineConfig(16L << 30);
    assertEquals(1L << 30, huge.memtableCapacity());
    assertEquals(14L << 30, huge.blockCacheSize());

    IllegalConfigurationException tooSmall =
        assertThrows(IllegalConfigurationException.class, () -> settings().engineConfig(8000));
    assertEquals(
        "A Cobble memory budget of 8000 bytes leaves 2000 bytes per memtable (budget ×"
            + " state.backend.cobble.memory.memtable-buffer-ratio /"
            + " state.backend.cobble.memory.memtable-buffer-count); at least 4096 are needed."
            + " Give the backend more memory or lower the buffer count.",
        tooSmall.getMessage());
  }

  @Test
  void memtableBufferRatio() {
    for (String bad : new String[] {"0", "1", "-0.5", "1.5"}) {
      assertRejected(
          "memory.memtable-buffer-ratio",
          bad,
          "Invalid value '"
              + bad
              + "' for state.backend.cobble.memory.memtable-buffer-ratio: expected a number"
              + " between 0 and 1 (both excluded).");
    }
    assertRejected(
        "memory.memtable-buffer-ratio",
        "half",
        "Invalid value 'half' for state.backend.cobble.memory.memtable-buffer-ratio: expected a"
            + " number between 0 and 1 (both excluded).");
  }

  @Test
  void memtableBufferCount() {
    assertRejected(
        "memory.memtable-buffer-count",
        "1",
        "Invalid value '1' for state.backend.cobble.memory.memtable-buffer-count: allowed range"
            + " is 2..64.");
    assertRejected(
        "memory.memtable-buffer-count",
        "65",
        "Invalid value '65' for state.backend.cobble.memory.memtable-buffer-count: allowed range"
            + " is 2..64.");
  }

  // ---- engine-mapped keys ----

  @Test
  void memtableType() {
    assertEquals("adaptive", engine().get("memtable.type"));
    assertEquals("hash", engine("memtable.type", "HASH").get("memtable.type"));
    assertEquals("skiplist", engine("memtable.type", "skiplist").get("memtable.type"));
    assertEquals("vec", engine("memtable.type", "Vec").get("memtable.type"));
    assertRejected(
        "memtable.type",
        "btree",
        "Invalid value 'btree' for state.backend.cobble.memtable.type: allowed values are"
            + " adaptive, skiplist, hash, vec.");
  }

  @Test
  void compactionPolicy() {
    assertEquals("score_priority", engine().get("compaction.policy"));
    assertEquals(
        "round_robin", engine("compaction.policy", "ROUND_ROBIN").get("compaction.policy"));
    assertEquals(
        "min_overlap", engine("compaction.policy", "min_overlap").get("compaction.policy"));
    assertRejected(
        "compaction.policy",
        "leveled",
        "Invalid value 'leveled' for state.backend.cobble.compaction.policy: allowed values are"
            + " round_robin, min_overlap, score_priority.");
  }

  @Test
  void l0FileLimitAndWriteStallLimit() {
    Config defaults = settings().engineConfig(BUDGET);
    assertEquals(2, defaults.l0FileLimit());
    assertEquals(32, defaults.writeStallLimit());
    Config raised = settings("compaction.l0-file-limit", "40").engineConfig(BUDGET);
    assertEquals(40, raised.l0FileLimit());
    assertEquals(42, raised.writeStallLimit());
    Config explicit =
        settings("compaction.l0-file-limit", "4", "compaction.write-stall-limit", "6")
            .engineConfig(BUDGET);
    assertEquals(6, explicit.writeStallLimit());
    assertRejected(
        "compaction.l0-file-limit",
        "0",
        "Invalid value '0' for state.backend.cobble.compaction.l0-file-limit: allowed range is"
            + " 1..1000.");
    IllegalConfigurationException stall =
        assertThrows(
            IllegalConfigurationException.class,
            () -> settings("compaction.l0-file-limit", "4", "compaction.write-stall-limit", "5"));
    assertEquals(
        "Invalid value '5' for state.backend.cobble.compaction.write-stall-limit: must be at least"
            + " state.backend.cobble.compaction.l0-file-limit + 2 = 6.",
        stall.getMessage());
    assertRejected(
        "compaction.write-stall-limit",
        "x",
        "Invalid value 'x' for state.backend.cobble.compaction.write-stall-limit: expected an"
            + " integer in 1..100000.");
  }

  @Test
  void listsAreCompressedAtEveryLevelPointReadFamiliesFromL2() {
    Config c = settings().engineConfig(BUDGET);
    for (int level = 0; level < c.maxLevels(); level++) {
      assertTrue(c.lz4ForLevel(level, true), "merge family at L" + level);
      assertEquals(level >= 2, c.lz4ForLevel(level, false), "other family at L" + level);
    }
  }

  @Test
  void listsAreWrittenInLargerBlocksThanPointReadFamilies() {
    Config c = settings().engineConfig(BUDGET);
    assertEquals(32 << 10, c.blockSize(true));
    assertEquals(4 << 10, c.blockSize(false));
  }

  @Test
  void compactionThreadsAndReadAhead() {
    assertEquals(4, settings().engineConfig(BUDGET).compactionThreads());
    assertEquals(2, settings("compaction.threads", "2").engineConfig(BUDGET).compactionThreads());
    assertRejected(
        "compaction.threads",
        "0",
        "Invalid value '0' for state.backend.cobble.compaction.threads: allowed range is"
            + " 1..256.");
    assertTrue(settings().engineConfig(BUDGET).readAheadEnabled());
    assertFalse(
        settings("compaction.read-ahead.enabled", "false").engineConfig(BUDGET).readAheadEnabled());
    assertRejected(
        "compaction.read-ahead.enabled",
        "on",
        "Invalid value 'on' for state.backend.cobble.compaction.read-ahead.enabled: allowed"
            + " values are true, false.");
  }

  @Test
  void bloomFilterAndIndex() {
    assertEquals("true", engine().get("sst.bloom-filter.enabled"));
    assertEquals(
        "false", engine("sst.bloom-filter.enabled", "false").get("sst.bloom-filter.enabled"));
    assertEquals("10", engine().get("sst.bloom-filter.bits-per-key"));
    assertEquals(
        "16", engine("sst.bloom-filter.bits-per-key", "16").get("sst.bloom-filter.bits-per-key"));
    assertRejected(
        "sst.bloom-filter.bits-per-key",
        "65",
        "Invalid value '65' for state.backend.cobble.sst.bloom-filter.bits-per-key: allowed range"
            + " is 1..64.");
    assertRejected(
        "sst.bloom-filter.enabled",
        "maybe",
        "Invalid value 'maybe' for state.backend.cobble.sst.bloom-filter.enabled: allowed values"
            + " are true, false.");
    assertEquals("true", engine().get("sst.partitioned-index.enabled"));
    assertEquals(
        "false",
        engine("sst.partitioned-index.enabled", "false").get("sst.partitioned-index.enabled"));
    assertRejected(
        "sst.partitioned-index.enabled",
        "2",
        "Invalid value '2' for state.backend.cobble.sst.partitioned-index.enabled: allowed values"
            + " are true, false.");
  }

  @Test
  void metadataCacheAndPinnedMetadata() {
    assertEquals("eager", engine().get("sst.read-metadata-cache.mode"));
    assertEquals(
        "lazy", engine("sst.read-metadata-cache.mode", "lazy").get("sst.read-metadata-cache.mode"));
    assertEquals(
        "off", engine("sst.read-metadata-cache.mode", "OFF").get("sst.read-metadata-cache.mode"));
    assertRejected(
        "sst.read-metadata-cache.mode",
        "always",
        "Invalid value 'always' for state.backend.cobble.sst.read-metadata-cache.mode: allowed"
            + " values are EAGER, LAZY, OFF.");
    assertEquals("2", engine().get("sst.pinned-metadata.max-level"));
    assertEquals(
        "-1", engine("sst.pinned-metadata.max-level", "-1").get("sst.pinned-metadata.max-level"));
    assertRejected(
        "sst.pinned-metadata.max-level",
        "7",
        "Invalid value '7' for state.backend.cobble.sst.pinned-metadata.max-level: allowed range"
            + " is -1..6.");
    assertEquals("true", engine().get("sst.pinned-metadata.partitions.enabled"));
    assertEquals(
        "false",
        engine("sst.pinned-metadata.partitions.enabled", "false")
            .get("sst.pinned-metadata.partitions.enabled"));
    assertRejected(
        "sst.pinned-metadata.partitions.enabled",
        "no",
        "Invalid value 'no' for state.backend.cobble.sst.pinned-metadata.partitions.enabled:"
            + " allowed values are true, false.");
  }

  @Test
  void valueSeparationAndValueLogPlacement() {
    assertEquals("1024", engine().get("value-separation.threshold"));
    assertEquals(
        String.valueOf(4L << 20),
        engine("value-separation.threshold", "4mb").get("value-separation.threshold"));
    assertEquals("0", engine("value-separation.threshold", "0").get("value-separation.threshold"));
    assertRejected(
        "value-separation.threshold",
        "2gb",
        "Invalid value '2gb' for state.backend.cobble.value-separation.threshold: allowed range"
            + " is 0 bytes..1gb.");
    assertFalse(settings().vlogLowPriorityPrimary());
    assertTrue(settings("vlog.low-priority-primary.enabled", "true").vlogLowPriorityPrimary());
    assertRejected(
        "vlog.low-priority-primary.enabled",
        "y",
        "Invalid value 'y' for state.backend.cobble.vlog.low-priority-primary.enabled: allowed"
            + " values are true, false.");
  }

  @Test
  void directIoBuffers() {
    Config defaults = settings().engineConfig(BUDGET);
    assertEquals(2048, defaults.directIoBufferSize());
    assertEquals(64, defaults.directIoPoolMaxSize());
    Config custom =
        settings("direct-io.buffer-size", "8kb", "direct-io.pool-max-size", "0")
            .engineConfig(BUDGET);
    assertEquals(8192, custom.directIoBufferSize());
    assertEquals(0, custom.directIoPoolMaxSize());
    assertRejected(
        "direct-io.buffer-size",
        "256b",
        "Invalid value '256b' for state.backend.cobble.direct-io.buffer-size: allowed range is"
            + " 512 bytes..64mb.");
    assertRejected(
        "direct-io.pool-max-size",
        "-1",
        "Invalid value '-1' for state.backend.cobble.direct-io.pool-max-size: allowed range is"
            + " 0..100000.");
  }

  // ---- logging ----

  @Test
  void logKeys() {
    CobbleStateSettings defaults = settings();
    assertEquals(10L << 20, defaults.logMaxFileSize());
    assertEquals(3, defaults.logKeepFiles());
    assertEquals("info", defaults.logLevel());
    CobbleStateSettings custom =
        settings("log.max-file-size", "1mb", "log.keep-files", "10", "log.level", "DEBUG");
    assertEquals(1L << 20, custom.logMaxFileSize());
    assertEquals(10, custom.logKeepFiles());
    assertEquals("debug", custom.logLevel());
    assertRejected(
        "log.max-file-size",
        "10b",
        "Invalid value '10b' for state.backend.cobble.log.max-file-size: allowed range is"
            + " 1kb..1024gb.");
    assertRejected(
        "log.keep-files",
        "0",
        "Invalid value '0' for state.backend.cobble.log.keep-files: allowed range is 1..10000.");
    assertRejected(
        "log.level",
        "verbose",
        "Invalid value 'verbose' for state.backend.cobble.log.level: allowed values are trace,"
            + " debug, info, warn, error, off.");
  }

  // ---- later work: parsed, validated, then rejected ----

  @Test
  void compactionModeLocalIsTheDefault() {
    settings();
    settings("compaction.mode", "local");
    assertRejected(
        "compaction.mode",
        "cloud",
        "Invalid value 'cloud' for state.backend.cobble.compaction.mode: allowed values are"
            + " LOCAL, REMOTE, DEDICATED.");
  }

  @Test
  void remoteCompactionIsValidatedThenNotAvailable() {
    assertEquals(
        "Remote compaction (state.backend.cobble.compaction.mode: REMOTE) is not available yet in"
            + " this Cobble release; set state.backend.cobble.compaction.mode to LOCAL (the"
            + " default) and leave state.backend.cobble.compaction.remote.addr unset.",
        rejection("compaction.mode", "remote", "compaction.remote.addr", "127.0.0.1:18888"));
    assertEquals(
        "Remote compaction (state.backend.cobble.compaction.remote.addr) is not available yet in"
            + " this Cobble release; set state.backend.cobble.compaction.mode to LOCAL (the"
            + " default) and leave state.backend.cobble.compaction.remote.addr unset.",
        rejection("compaction.remote.addr", "compactor:18888"));
    assertEquals(
        "state.backend.cobble.compaction.mode REMOTE needs"
            + " state.backend.cobble.compaction.remote.addr (host:port of the compactor).",
        rejection("compaction.mode", "REMOTE"));
    assertEquals(
        "state.backend.cobble.compaction.remote.addr is set but"
            + " state.backend.cobble.compaction.mode is LOCAL: remove the address or choose"
            + " REMOTE.",
        rejection("compaction.mode", "LOCAL", "compaction.remote.addr", "h:1"));
    for (String bad : new String[] {"compactor", ":80", "h:0", "h:70000", "h:x"}) {
      assertRejected(
          "compaction.remote.addr",
          bad,
          "Invalid value '"
              + bad
              + "' for state.backend.cobble.compaction.remote.addr: expected host:port with a port"
              + " in 1..65535.");
    }
    // The timeout is validated even in LOCAL mode, so a bad value never waits for REMOTE; a valid
    // one is refused because nothing would use it.
    assertRejected(
        "compaction.remote.timeout",
        "30s",
        "state.backend.cobble.compaction.remote.timeout is set, but remote and dedicated"
            + " compaction are not available yet in this Cobble release; compaction runs in the"
            + " TaskManager (state.backend.cobble.compaction.mode: LOCAL). Remove"
            + " state.backend.cobble.compaction.remote.timeout.");
    assertRejected(
        "compaction.remote.timeout",
        "0s",
        "Invalid value '0s' for state.backend.cobble.compaction.remote.timeout: expected a"
            + " positive duration such as 30s or 5min.");
    assertRejected(
        "compaction.remote.timeout",
        "soon",
        "Invalid value 'soon' for state.backend.cobble.compaction.remote.timeout: expected a"
            + " positive duration such as 30s or 5min.");
  }

  @Test
  void dedicatedCompactionIsValidatedThenNotAvailable() {
    assertEquals(
        "Dedicated compaction (state.backend.cobble.compaction.mode: DEDICATED) is not available"
            + " yet in this Cobble release; set state.backend.cobble.compaction.mode to LOCAL (the"
            + " default) and leave state.backend.cobble.compaction.remote.addr unset.",
        rejection(
            "compaction.mode",
            "Dedicated",
            "compaction.dedicated.poll-interval",
            "2s",
            "compaction.dedicated.orphan-min-age",
            "10min"));
    for (String key :
        new String[] {
          "compaction.dedicated.poll-interval", "compaction.dedicated.orphan-min-age"
        }) {
      assertRejected(
          key,
          "1s",
          P
              + key
              + " is set, but remote and dedicated compaction are not available yet in this Cobble"
              + " release; compaction runs in the TaskManager (state.backend.cobble.compaction.mode:"
              + " LOCAL). Remove "
              + P
              + key
              + ".");
    }
    assertRejected(
        "compaction.dedicated.poll-interval",
        "0ms",
        "Invalid value '0ms' for state.backend.cobble.compaction.dedicated.poll-interval:"
            + " expected a positive duration such as 30s or 5min.");
    assertRejected(
        "compaction.dedicated.orphan-min-age",
        "-1s",
        "Invalid value '-1s' for state.backend.cobble.compaction.dedicated.orphan-min-age:"
            + " expected a positive duration such as 30s or 5min.");
    // A bad value of a dedicated key is reported before the mode is refused.
    assertEquals(
        "Invalid value '0s' for state.backend.cobble.compaction.dedicated.poll-interval: expected"
            + " a positive duration such as 30s or 5min.",
        rejection("compaction.mode", "DEDICATED", "compaction.dedicated.poll-interval", "0s"));
  }

  @Test
  void asyncThreadsAreValidatedAndKept() {
    assertEquals(4, settings().asyncReadThreads());
    assertEquals(1, settings().asyncWriteThreads());
    CobbleStateSettings custom = settings("async.read-threads", "8", "async.write-threads", "2");
    assertEquals(8, custom.asyncReadThreads());
    assertEquals(2, custom.asyncWriteThreads());
    assertRejected(
        "async.read-threads",
        "0",
        "Invalid value '0' for state.backend.cobble.async.read-threads: allowed range is 1..256.");
    assertRejected(
        "async.write-threads",
        "257",
        "Invalid value '257' for state.backend.cobble.async.write-threads: allowed range is"
            + " 1..256.");
  }

  // ---- per-job layering and shipping ----

  @Test
  void jobConfigurationOverridesTheClusterKeyByKey() {
    Configuration cluster = config("memtable.type", "hash", "compaction.threads", "2");
    Configuration job = config("compaction.threads", "3", "timer-service.factory", "HEAP");
    CobbleStateSettings merged = CobbleStateSettings.fromConfig(cluster, job);
    Config engine = merged.engineConfig(BUDGET);
    assertEquals("hash", engine.values().get("memtable.type"));
    assertEquals(3, engine.compactionThreads());
    assertEquals(TimerServiceKind.HEAP, merged.timerService());
    Configuration typed = new Configuration();
    typed.set(CobbleStateBackendOptions.MEMORY_FIXED_PER_SLOT, MemorySize.parse("96mb"));
    typed.set(CobbleStateBackendOptions.COMPACTION_READ_AHEAD, false);
    assertEquals(96L << 20, CobbleStateSettings.fromConfig(cluster, typed).memoryBudget(0));
    IllegalConfigurationException bad =
        assertThrows(
            IllegalConfigurationException.class,
            () -> CobbleStateSettings.fromConfig(cluster, config("memtable.type", "tree")));
    assertTrue(bad.getMessage().startsWith("Invalid value 'tree' for " + P + "memtable.type"));
  }

  @Test
  void settingsSurviveJavaSerialization() throws Exception {
    CobbleStateSettings original =
        settings("localdir", "/data/cobble", "compaction.threads", "3", "memtable.type", "hash");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(original);
    }
    CobbleStateSettings copy;
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      copy = (CobbleStateSettings) in.readObject();
    }
    assertEquals(List.of(Paths.get("/data/cobble")), copy.localDirs());
    assertEquals(original.engineConfig(BUDGET).values(), copy.engineConfig(BUDGET).values());
  }

  // ---- helpers ----

  private static Configuration config(String... keyValues) {
    Map<String, String> map = new java.util.LinkedHashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      map.put(P + keyValues[i], keyValues[i + 1]);
    }
    return Configuration.fromMap(map);
  }

  private static CobbleStateSettings settings(String... keyValues) {
    return CobbleStateSettings.fromConfig(config(keyValues));
  }

  private static Map<String, String> engine(String... keyValues) {
    return settings(keyValues).engineConfig(BUDGET).values();
  }

  private static String rejection(String... keyValues) {
    return assertThrows(IllegalConfigurationException.class, () -> settings(keyValues))
        .getMessage();
  }

  private static void assertRejected(String key, String value, String message) {
    assertEquals(message, rejection(key, value), key + "=" + value);
  }
}
