package io.cobble.sst;

import io.cobble.cache.BlockCache;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The data blocks of a table that never changes under its readers (a read-only Db's), each kept in
 * memory from its first point read for as long as the table is open, in a slot per block. A point
 * read of a kept block is one array load: no cache probe, no lock, no pin to take and release, as
 * nothing evicts or recycles a kept block.
 *
 * <p>The memory comes out of the block cache's capacity ({@link BlockCache#reserve}) in eighths of
 * the table's file size, as kept blocks need it (a table only scanned sets nothing aside). When the
 * cache cannot set more aside, the blocks not kept yet go through the cache's eviction order as any
 * table's do, and the reservation is tried again every {@link #RETRY_INTERVAL} such reads, so a
 * table opened while another snapshot's tables still held the memory gets its share once they
 * close.
 */
final class ResidentBlocks {
  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(byte[][].class);

  /** Reads through the evicting cache between two attempts to reserve more memory. */
  static final int RETRY_INTERVAL = 1024;

  private final byte[][] slots;
  private final BlockCache cache;
  private final long fileSize;
  private long reserved;
  private long used;
  private volatile boolean full;
  private int sinceFull;

  /**
   * @param blocks the table's data block count
   * @param fileSize the table's size, eight times a reservation's
   */
  ResidentBlocks(int blocks, BlockCache cache, long fileSize) {
    this.slots = new byte[blocks][];
    this.cache = cache;
    this.fileSize = fileSize;
  }

  /** The kept bytes of data block {@code block} (the table's ordinal), or null. */
  byte[] get(int block) {
    return (byte[]) SLOT.getAcquire(slots, block);
  }

  /**
   * Whether a block not kept yet should be read to be kept: false while the reservation cannot
   * grow, except for one read in {@link #RETRY_INTERVAL}.
   */
  boolean mayKeep() {
    if (!full) {
      return true;
    }
    // A racy count is enough: it only spaces out the retries.
    if (++sinceFull >= RETRY_INTERVAL) {
      sinceFull = 0;
      full = false;
      return true;
    }
    return false;
  }

  /**
   * Keeps {@code data} as block {@code block} when the reservation has room for it, and returns the
   * bytes kept for the block (another reader's when it kept them first), or null when there is no
   * room: later reads of the block go through the cache instead.
   */
  byte[] keep(int block, byte[] data) {
    if (!charge(data.length)) {
      full = true;
      return null;
    }
    // Volatile on both outcomes: a reader that lost the race reads the winner's bytes.
    byte[] kept = (byte[]) SLOT.compareAndExchange(slots, block, null, data);
    if (kept != null) {
      charge(-data.length);
      return kept;
    }
    return data;
  }

  private synchronized boolean charge(long bytes) {
    if (used + bytes > reserved) {
      long more = Math.max(Math.max(1, fileSize / 8), used + bytes - reserved);
      if (!cache.reserve(more)) {
        return false;
      }
      reserved += more;
    }
    used += bytes;
    return true;
  }

  /** Gives the reservation back; the table is closed and no read uses its blocks any more. */
  synchronized void release() {
    if (reserved > 0) {
      cache.unreserve(reserved);
      reserved = 0;
    }
  }

  /** Bytes of kept blocks. */
  synchronized long used() {
    return used;
  }
}
