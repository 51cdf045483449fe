package io.cobble.benchmarks.engine;

/** One set of tuning values applied to both engines, so a ratio compares engines, not configs. */
final class StoreSettings {
  final long memtableBytes = 64L << 20;
  final int memtableBuffers = 2;
  final int blockSize = 4096;
  final int bloomBitsPerKey = 10;
  final long blockCacheBytes = 64L << 20;
  final int l0FileLimit = 4;
  final int backgroundThreads = 2;
}
