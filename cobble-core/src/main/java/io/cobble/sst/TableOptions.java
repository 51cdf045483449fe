package io.cobble.sst;

/** Per-file build settings, derived from the Config and the output level. */
public final class TableOptions {
  final int blockSize;
  final int restartInterval;
  final boolean bloom;
  final int bitsPerKey;
  final boolean partitioned;
  final boolean lz4;
  final boolean sync;

  /** Whether finished files are fsynced. */
  public boolean sync() {
    return sync;
  }

  public TableOptions(
      int blockSize,
      int restartInterval,
      boolean bloom,
      int bitsPerKey,
      boolean partitioned,
      boolean lz4,
      boolean sync) {
    this.blockSize = blockSize;
    this.restartInterval = restartInterval;
    this.bloom = bloom;
    this.bitsPerKey = bitsPerKey;
    this.partitioned = partitioned;
    this.lz4 = lz4;
    this.sync = sync;
  }
}
