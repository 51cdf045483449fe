package io.cobble.sst;

/**
 * Whether a table's next data block is worth an LZ4 attempt. After {@value #RUN} blocks in a row
 * that LZ4 could not shrink enough to keep (they were stored raw), only every {@value #EVERY}th
 * block is tried, until one compresses again. Data that does not compress (random numbers, hashes,
 * values compressed before) then stops paying a compressor pass over every block, which was 44 % of
 * a compaction's CPU for lists of random longs; data that starts to compress again is noticed
 * within {@value #EVERY} blocks. Only CPU changes: a block stored raw is always valid.
 */
final class Lz4Backoff {
  static final int RUN = 8;
  static final int EVERY = 16;

  private int failedRun;
  private int skipped;

  /** Whether to try LZ4 on the next block; when true, report the outcome to {@link #result}. */
  boolean attempt() {
    if (failedRun < RUN) {
      return true;
    }
    if (++skipped < EVERY) {
      return false;
    }
    skipped = 0;
    return true;
  }

  /** The outcome of an attempted block: whether LZ4 was kept for it. */
  void result(boolean compressed) {
    if (compressed) {
      failedRun = 0;
      skipped = 0;
    } else if (failedRun < RUN) {
      failedRun++;
    }
  }
}
