package io.cobble;

/** Immutable snapshot of a Db's counters and gauges. */
public final class DbMetrics {
  private final long flushes;
  private final long flushBytes;
  private final long compactions;
  private final long trivialMoves;
  private final long expiredFileDrops;
  private final long compactionBytesIn;
  private final long compactionBytesOut;
  private final long stallWaits;
  private final long stallMillis;
  private final long cacheHits;
  private final long cacheMisses;
  private final long cacheUsage;
  private final int liveFiles;
  private final long liveBytes;
  private final int vlogFiles;
  private final long vlogBytes;
  private final long memtableBytes;
  private final int immutableMemtables;
  private final int[] filesPerLevel;

  DbMetrics(
      long flushes,
      long flushBytes,
      long compactions,
      long trivialMoves,
      long expiredFileDrops,
      long compactionBytesIn,
      long compactionBytesOut,
      long stallWaits,
      long stallMillis,
      long cacheHits,
      long cacheMisses,
      long cacheUsage,
      int liveFiles,
      long liveBytes,
      int vlogFiles,
      long vlogBytes,
      long memtableBytes,
      int immutableMemtables,
      int[] filesPerLevel) {
    this.flushes = flushes;
    this.flushBytes = flushBytes;
    this.compactions = compactions;
    this.trivialMoves = trivialMoves;
    this.expiredFileDrops = expiredFileDrops;
    this.compactionBytesIn = compactionBytesIn;
    this.compactionBytesOut = compactionBytesOut;
    this.stallWaits = stallWaits;
    this.stallMillis = stallMillis;
    this.cacheHits = cacheHits;
    this.cacheMisses = cacheMisses;
    this.cacheUsage = cacheUsage;
    this.liveFiles = liveFiles;
    this.liveBytes = liveBytes;
    this.vlogFiles = vlogFiles;
    this.vlogBytes = vlogBytes;
    this.memtableBytes = memtableBytes;
    this.immutableMemtables = immutableMemtables;
    this.filesPerLevel = filesPerLevel.clone();
  }

  public long flushes() {
    return flushes;
  }

  public long flushBytes() {
    return flushBytes;
  }

  /** Merge compactions run (trivial moves and expired-file drops are counted separately). */
  public long compactions() {
    return compactions;
  }

  public long trivialMoves() {
    return trivialMoves;
  }

  public long expiredFileDrops() {
    return expiredFileDrops;
  }

  public long compactionBytesIn() {
    return compactionBytesIn;
  }

  public long compactionBytesOut() {
    return compactionBytesOut;
  }

  public long stallWaits() {
    return stallWaits;
  }

  public long stallMillis() {
    return stallMillis;
  }

  public long cacheHits() {
    return cacheHits;
  }

  public long cacheMisses() {
    return cacheMisses;
  }

  public long cacheUsage() {
    return cacheUsage;
  }

  public int liveFiles() {
    return liveFiles;
  }

  public long liveBytes() {
    return liveBytes;
  }

  public int vlogFiles() {
    return vlogFiles;
  }

  public long vlogBytes() {
    return vlogBytes;
  }

  public long memtableBytes() {
    return memtableBytes;
  }

  public int immutableMemtables() {
    return immutableMemtables;
  }

  /** Table files per level summed over all trees. */
  public int[] filesPerLevel() {
    return filesPerLevel.clone();
  }

  @Override
  public String toString() {
    return "DbMetrics{flushes="
        + flushes
        + ", flushBytes="
        + flushBytes
        + ", compactions="
        + compactions
        + ", trivialMoves="
        + trivialMoves
        + ", expiredFileDrops="
        + expiredFileDrops
        + ", compactionBytesIn="
        + compactionBytesIn
        + ", compactionBytesOut="
        + compactionBytesOut
        + ", stallWaits="
        + stallWaits
        + ", cacheHits="
        + cacheHits
        + ", cacheMisses="
        + cacheMisses
        + ", cacheUsage="
        + cacheUsage
        + ", liveFiles="
        + liveFiles
        + ", liveBytes="
        + liveBytes
        + ", vlogFiles="
        + vlogFiles
        + ", filesPerLevel="
        + java.util.Arrays.toString(filesPerLevel)
        + "}";
  }
}
