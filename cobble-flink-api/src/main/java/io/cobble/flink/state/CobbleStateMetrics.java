package io.cobble.flink.state;

import io.cobble.Db;
import io.cobble.DbMetrics;
import io.cobble.MemoryPool;
import io.cobble.compaction.CompactionPicker;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * The engine's gauges of one keyed backend, in the operator's metric group under {@code cobble}:
 * memory (memtables, block cache, the budget), block cache hits and misses, level-0 files, table
 * files and bytes, the estimated bytes compaction still has to rewrite, write stalls, and the bytes
 * checkpoints handed over. Each gauge reads the shard when the reporter asks, so nothing is counted
 * on the state access path.
 */
final class CobbleStateMetrics {

  static final String GROUP = "cobble";

  private final Db db;
  private final CompactionPicker levels;
  private final AtomicLong checkpointUploadBytesTotal = new AtomicLong();
  private final AtomicLong lastCheckpointUploadBytes = new AtomicLong();
  private volatile boolean closed;

  private CobbleStateMetrics(Db db) {
    this.db = db;
    this.levels = new CompactionPicker(db.config());
  }

  /**
   * Registers the gauges of {@code db} in {@code operatorGroup}. With a slot-wide pool the budget
   * and block cache gauges describe the pool, and {@code poolMemtableBytes} adds the memtables of
   * all the slot's backends to this backend's own {@code memtableBytes}.
   */
  static CobbleStateMetrics register(Db db, MetricGroup operatorGroup, BackendMemory memory) {
    CobbleStateMetrics m = new CobbleStateMetrics(db);
    MetricGroup g = operatorGroup.addGroup(GROUP);
    long memoryBudgetBytes = memory.budgetBytes();
    g.gauge("memoryBudgetBytes", (Gauge<Long>) () -> memoryBudgetBytes);
    MemoryPool pool = memory.pool();
    if (pool != null) {
      g.gauge("poolMemtableBytes", (Gauge<Long>) pool::memtableUsage);
      g.gauge("poolMemtableBudgetBytes", (Gauge<Long>) pool::writeBufferBytes);
      g.gauge("poolBackends", (Gauge<Integer>) pool::members);
    }
    g.gauge("memtableBytes", m.engine(DbMetrics::memtableBytes));
    g.gauge("immutableMemtables", m.engine(DbMetrics::immutableMemtables));
    g.gauge("blockCacheUsageBytes", m.engine(DbMetrics::cacheUsage));
    long cacheCapacity = pool != null ? pool.blockCacheBytes() : db.config().blockCacheSize();
    g.gauge("blockCacheCapacityBytes", (Gauge<Long>) () -> cacheCapacity);
    g.gauge("blockCacheHits", m.engine(DbMetrics::cacheHits));
    g.gauge("blockCacheMisses", m.engine(DbMetrics::cacheMisses));
    g.gauge("l0Files", m.engine(d -> d.filesPerLevel()[0]));
    g.gauge("liveFiles", m.engine(DbMetrics::liveFiles));
    g.gauge("liveBytes", m.engine(DbMetrics::liveBytes));
    g.gauge("pendingCompactionBytes", (Gauge<Long>) m::pendingCompactionBytes);
    g.gauge("writeStalls", m.engine(DbMetrics::stallWaits));
    g.gauge("writeStallMillis", m.engine(DbMetrics::stallMillis));
    g.gauge("compactions", m.engine(DbMetrics::compactions));
    g.gauge("checkpointUploadBytesTotal", (Gauge<Long>) m.checkpointUploadBytesTotal::get);
    g.gauge("lastCheckpointUploadBytes", (Gauge<Long>) m.lastCheckpointUploadBytes::get);
    return m;
  }

  /** A checkpoint handed {@code bytes} of new files and metadata to Flink. */
  void checkpointUploaded(long bytes) {
    lastCheckpointUploadBytes.set(bytes);
    checkpointUploadBytesTotal.addAndGet(bytes);
  }

  /** The shard is closing: gauges read 0 from now on. */
  void close() {
    closed = true;
  }

  private Gauge<Long> engine(ToLongFunction<DbMetrics> read) {
    return () -> {
      if (closed) {
        return 0L;
      }
      try {
        return read.applyAsLong(db.metrics());
      } catch (RuntimeException e) {
        // The shard closed between the check and the read.
        return 0L;
      }
    };
  }

  /**
   * Bytes compaction would rewrite to bring every level back under its target: all of level 0 once
   * it reached the file limit, and each deeper level's excess over its target size.
   */
  long pendingCompactionBytes() {
    if (closed) {
      return 0L;
    }
    Version v;
    try {
      v = db.versionSet().acquire();
    } catch (RuntimeException e) {
      return 0L;
    }
    try {
      long pending = 0;
      for (Tree t : v.trees()) {
        if (t.level(0).size() >= db.config().l0FileLimit()) {
          pending += t.levelBytes(0);
        }
        for (int level = 1; level < t.levelCount() - 1; level++) {
          pending += Math.max(0, t.levelBytes(level) - levels.levelTarget(level));
        }
      }
      return pending;
    } finally {
      v.unref();
    }
  }
}
