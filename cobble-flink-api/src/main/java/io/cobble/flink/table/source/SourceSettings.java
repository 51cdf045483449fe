package io.cobble.flink.table.source;

import io.cobble.Config;
import io.cobble.EngineOptions;
import io.cobble.flink.table.CobbleSourceOptions;
import io.cobble.flink.table.ScanMode;
import io.cobble.flink.table.TableStorage;
import io.cobble.reader.Reader;
import io.cobble.storage.Storage;
import java.io.Serializable;

/**
 * What a running source needs from the validated DDL: where the table is, which global snapshot to
 * read, how to read it and how large the reader's block cache is. Shipped to the enumerator, the
 * readers and the lookup functions.
 */
public final class SourceSettings implements Serializable {

  private static final long serialVersionUID = 1L;

  /** {@link #globalId()} of {@code scan.checkpoint-id = 'latest'}. */
  public static final long LATEST = 0;

  private final TableStorage table;
  private final long globalId;
  private final ScanMode mode;
  private final long pollIntervalMs;
  private final long blockCacheBytes;
  private final long rowCacheBytes;
  private final long snapshotLeaseMs;

  /** Settings with the default {@code scan.snapshot-lease-ms}. */
  public SourceSettings(
      TableStorage table, long globalId, ScanMode mode, long pollIntervalMs, long blockCacheBytes) {
    this(
        table,
        globalId,
        mode,
        pollIntervalMs,
        blockCacheBytes,
        0,
        CobbleSourceOptions.SCAN_SNAPSHOT_LEASE_MS.defaultValue());
  }

  /**
   * @param globalId a global snapshot id, or {@link #LATEST} to follow {@code global/CURRENT}
   * @param rowCacheBytes the reader's cache of lookup results; 0 for none
   * @param snapshotLeaseMs how long the source's pin on the snapshots it reads lasts unrenewed
   */
  public SourceSettings(
      TableStorage table,
      long globalId,
      ScanMode mode,
      long pollIntervalMs,
      long blockCacheBytes,
      long rowCacheBytes,
      long snapshotLeaseMs) {
    if (mode == ScanMode.STREAMING && globalId != LATEST) {
      throw new IllegalArgumentException("streaming reads follow the latest snapshot only");
    }
    this.table = table;
    this.globalId = globalId;
    this.mode = mode;
    this.pollIntervalMs = pollIntervalMs;
    this.blockCacheBytes = blockCacheBytes;
    this.rowCacheBytes = rowCacheBytes;
    this.snapshotLeaseMs = snapshotLeaseMs;
  }

  public TableStorage table() {
    return table;
  }

  public long globalId() {
    return globalId;
  }

  public boolean followsLatest() {
    return globalId == LATEST;
  }

  public boolean streaming() {
    return mode == ScanMode.STREAMING;
  }

  public long pollIntervalMs() {
    return pollIntervalMs;
  }

  public long snapshotLeaseMs() {
    return snapshotLeaseMs;
  }

  /** The engine configuration of a reader: only its caches are the source's to choose. */
  Config readerConfig() {
    return Config.builder()
        .set(EngineOptions.BLOCK_CACHE_SIZE, blockCacheBytes)
        .set(EngineOptions.ROW_CACHE_SIZE, rowCacheBytes)
        .build();
  }

  /** A reader of the configured snapshot: {@code CURRENT} when following the latest, else fixed. */
  Reader openReader(Storage storage) {
    return followsLatest()
        ? Reader.open(storage, readerConfig())
        : Reader.open(storage, globalId, readerConfig());
  }
}
