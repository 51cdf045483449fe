package io.cobble.cache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One table's references to those of its data blocks the {@link BlockCache} holds, by the table's
 * block ordinal, so that a read of a cached block needs neither the cache's lock nor its hash
 * probe: it loads the reference and pins the block in the block's own first bytes ({@link
 * BlockCache#RESERVED_BYTES}), which it reads next anyway. The cache sets a reference when a read
 * of the block goes through it (a miss or a hit) and clears it when the block leaves it; a reader
 * holding a reference the cache has just cleared finds the array claimed for reuse, or holding
 * another block, and reads through the cache instead.
 */
public final class BlockRefs {
  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(byte[][].class);

  private final byte[][] slots;
  private final long fileNumber;
  private final BlockCache cache;

  /**
   * @param blocks the table's data block count
   * @param fileNumber the table's file number, as in its blocks' cache keys
   */
  public BlockRefs(int blocks, long fileNumber, BlockCache cache) {
    this.slots = new byte[blocks][];
    this.fileNumber = fileNumber;
    this.cache = cache;
  }

  /**
   * Data block {@code block} pinned in its cached array, or null when the cache holds no reference
   * to it here (read it through the cache, which sets one). Release it with {@link #unpin}; the
   * block is the array's first {@link BlockCache#cachedLength} bytes, the reserved ones included.
   */
  public byte[] pin(int block) {
    byte[] a = (byte[]) SLOT.getAcquire(slots, block);
    if (a == null || !BlockCache.pinInPlace(a, identity(block))) {
      return null;
    }
    cache.countDirectHit();
    return a;
  }

  /**
   * The array the cache last referenced for block {@code block}, or null; not pinned, so it may
   * hold another block by the time it is read: only for reads whose result does not matter, such as
   * touching its lines ahead of a {@link #pin}.
   */
  public byte[] peek(int block) {
    return (byte[]) SLOT.getAcquire(slots, block);
  }

  /** Releases what {@link #pin} pinned. */
  public static void unpin(byte[] cached) {
    BlockCache.unpinInPlace(cached);
  }

  /** What the reserved bytes of block {@code block}'s array name it by, unique in the cache. */
  long identity(int block) {
    return (fileNumber << 32) | block;
  }

  /** Called by the cache, under the block's shard lock, once the array's reserved bytes are set. */
  void set(int block, byte[] cached) {
    SLOT.setRelease(slots, block, cached);
  }

  /** Called by the cache, under the block's shard lock, as {@code cached} leaves it. */
  void clear(int block, byte[] cached) {
    SLOT.compareAndSet(slots, block, cached, null);
  }
}
