package io.cobble.flink.state;

import io.cobble.Config;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.ReadableConfig;

/**
 * The validated settings of one Cobble state backend. Minimal seam: the options work of issue 11
 * replaces this class with the full {@code state.backend.cobble.*} set, keeping these methods.
 */
public final class CobbleStateSettings {

  static final ConfigOption<String> LOCAL_DIR =
      ConfigOptions.key("state.backend.cobble.localdir").stringType().noDefaultValue();
  static final ConfigOption<TimerServiceKind> TIMER_SERVICE =
      ConfigOptions.key("state.backend.cobble.timer-service.factory")
          .enumType(TimerServiceKind.class)
          .defaultValue(TimerServiceKind.COBBLE);
  static final ConfigOption<Boolean> PRIMARY_HIGH_PRIORITY =
      ConfigOptions.key("state.backend.cobble.localdir.primary-high-priority")
          .booleanType()
          .defaultValue(true);
  static final ConfigOption<Integer> SNAPSHOT_RETENTION =
      ConfigOptions.key("state.backend.cobble.snapshot.retention").intType().defaultValue(0);

  private static final long MIN_MEMTABLE = 1 << 20;

  private final List<Path> localDirs;
  private final TimerServiceKind timerService;
  private final boolean localPrimaryHighPriority;
  private final int snapshotRetention;

  private CobbleStateSettings(
      List<Path> localDirs,
      TimerServiceKind timerService,
      boolean localPrimaryHighPriority,
      int snapshotRetention) {
    this.localDirs = Collections.unmodifiableList(localDirs);
    this.timerService = timerService;
    this.localPrimaryHighPriority = localPrimaryHighPriority;
    this.snapshotRetention = snapshotRetention;
  }

  public static CobbleStateSettings fromConfig(ReadableConfig config) {
    List<Path> dirs = new ArrayList<>();
    config
        .getOptional(LOCAL_DIR)
        .ifPresent(
            value -> {
              for (String d : value.split("[,;" + java.io.File.pathSeparator + "]")) {
                if (!d.trim().isEmpty()) {
                  dirs.add(Paths.get(d.trim()).toAbsolutePath());
                }
              }
            });
    int retention = config.get(SNAPSHOT_RETENTION);
    if (retention < 0) {
      throw new IllegalArgumentException(
          "Invalid value " + retention + " for '" + SNAPSHOT_RETENTION.key() + "': must be >= 0");
    }
    return new CobbleStateSettings(
        dirs, config.get(TIMER_SERVICE), config.get(PRIMARY_HIGH_PRIORITY), retention);
  }

  /** Local working directories; empty means the TaskManager's temporary directories. */
  public List<Path> localDirs() {
    return localDirs;
  }

  /** The engine configuration of one keyed backend's shard within the memory budget. */
  public Config engineConfig(long memoryBudgetBytes) {
    Config.Builder b = Config.builder().set("fsync.enabled", false);
    if (memoryBudgetBytes > 0) {
      long memtable = Math.min(1L << 30, Math.max(MIN_MEMTABLE, memoryBudgetBytes / 4));
      b.set("memtable.capacity", memtable).set("block-cache.size", memoryBudgetBytes / 2);
    }
    return b.build();
  }

  /** The bytes one keyed backend may use, given its share of the slot's managed memory. */
  public long memoryBudget(long managedMemoryBytes) {
    return managedMemoryBytes;
  }

  public TimerServiceKind timerService() {
    return timerService;
  }

  public boolean localPrimaryHighPriority() {
    return localPrimaryHighPriority;
  }

  /** Snapshots kept by the engine besides Flink's retained checkpoints; 0 keeps none. */
  public int snapshotRetention() {
    return snapshotRetention;
  }
}
