package io.cobble.cache;

import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;

/**
 * LRU cache of decoded blocks, charged by bytes and shared by every table of a Db. Keys are {@code
 * (file number, block offset)} packed into a long. Each shard keeps its entries in parallel
 * primitive arrays (an open-addressing index plus an intrusive LRU list), so a cached block costs
 * no wrapper objects and a lookup allocates nothing.
 */
public final class BlockCache {
  private static final int SHARDS = 16;

  private final Shard[] shards = new Shard[SHARDS];
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();

  public BlockCache(long capacityBytes) {
    for (int i = 0; i < SHARDS; i++) {
      shards[i] = new Shard(capacityBytes / SHARDS);
    }
  }

  public static long key(long fileNumber, long offset) {
    return (fileNumber << 40) | offset;
  }

  private Shard shard(long key) {
    return shards[shardIndex(key)];
  }

  /** The shard a key lives in; each shard has 1/16 of the capacity and its own LRU order. */
  int shardIndex(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h >>> 60) & (SHARDS - 1);
  }

  public byte[] get(long key) {
    byte[] v = shard(key).get(key);
    if (v == null) {
      misses.increment();
    } else {
      hits.increment();
    }
    return v;
  }

  public void put(long key, byte[] block) {
    shard(key).put(key, block);
  }

  /** Drops every block of a file (called when the file is deleted). */
  public void evictFile(long fileNumber) {
    for (Shard s : shards) {
      s.evictFile(fileNumber);
    }
  }

  public long hits() {
    return hits.sum();
  }

  public long misses() {
    return misses.sum();
  }

  public long usage() {
    long u = 0;
    for (Shard s : shards) {
      u += s.usage();
    }
    return u;
  }

  /**
   * Entries live in parallel arrays: key, block, charge (the block's length, kept so eviction never
   * touches the cold block it drops), LRU links and the entry's slot in the open-addressing index
   * (kept so removal needs no probe for the victim, or for the entry moved into its place).
   */
  private static final class Shard {
    private final long capacity;
    private long usage;
    private long[] keys = new long[16];
    private byte[][] values = new byte[16][];
    private int[] charges = new int[16];
    private int[] slots = new int[16];
    private int[] prev = new int[16];
    private int[] next = new int[16];
    private int[] index = new int[32];
    private int size;
    private int head = -1;
    private int tail = -1;

    Shard(long capacity) {
      this.capacity = capacity;
      Arrays.fill(index, -1);
    }

    private static int hash(long key) {
      long h = key * 0xC2B2AE3D27D4EB4FL;
      return (int) (h ^ (h >>> 32));
    }

    /** The index slot holding {@code key}, or the empty slot where it would go (then -1 - slot). */
    private int probe(long key) {
      int mask = index.length - 1;
      for (int i = hash(key) & mask; ; i = (i + 1) & mask) {
        int e = index[i];
        if (e < 0) {
          return -1 - i;
        }
        if (keys[e] == key) {
          return i;
        }
      }
    }

    synchronized byte[] get(long key) {
      int i = probe(key);
      if (i < 0) {
        return null;
      }
      int e = index[i];
      if (e != head) {
        unlink(e);
        pushFront(e);
      }
      return values[e];
    }

    synchronized void put(long key, byte[] value) {
      if (value.length > capacity) {
        return;
      }
      int i = probe(key);
      if (i >= 0) {
        int e = index[i];
        usage += value.length - charges[e];
        values[e] = value;
        charges[e] = value.length;
        unlink(e);
        pushFront(e);
      } else {
        if (size == keys.length) {
          grow();
          i = probe(key);
        }
        int e = size++;
        keys[e] = key;
        values[e] = value;
        charges[e] = value.length;
        usage += value.length;
        pushFront(e);
        index[-1 - i] = e;
        slots[e] = -1 - i;
      }
      while (usage > capacity && tail >= 0) {
        remove(tail);
      }
    }

    private void grow() {
      int n = keys.length * 2;
      keys = Arrays.copyOf(keys, n);
      values = Arrays.copyOf(values, n);
      charges = Arrays.copyOf(charges, n);
      slots = Arrays.copyOf(slots, n);
      prev = Arrays.copyOf(prev, n);
      next = Arrays.copyOf(next, n);
      index = new int[n * 2];
      Arrays.fill(index, -1);
      for (int e = 0; e < size; e++) {
        int s = -1 - probe(keys[e]);
        index[s] = e;
        slots[e] = s;
      }
    }

    /** Backward-shift deletion keeps probe chains intact without tombstones. */
    private void deleteSlot(int i) {
      int mask = index.length - 1;
      int j = i;
      while (true) {
        j = (j + 1) & mask;
        int e = index[j];
        if (e < 0) {
          break;
        }
        int k = hash(keys[e]) & mask;
        boolean stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
          index[i] = e;
          slots[e] = i;
          i = j;
        }
      }
      index[i] = -1;
    }

    /** Removes entry e, moving the last entry into its place to keep the arrays dense. */
    private void remove(int e) {
      usage -= charges[e];
      unlink(e);
      deleteSlot(slots[e]);
      int last = size - 1;
      if (e != last) {
        index[slots[last]] = e;
        boolean wasHead = head == last;
        boolean wasTail = tail == last;
        int p = prev[last];
        int n = next[last];
        keys[e] = keys[last];
        values[e] = values[last];
        charges[e] = charges[last];
        slots[e] = slots[last];
        prev[e] = p;
        next[e] = n;
        if (p >= 0) {
          next[p] = e;
        }
        if (n >= 0) {
          prev[n] = e;
        }
        if (wasHead) {
          head = e;
        }
        if (wasTail) {
          tail = e;
        }
      }
      values[last] = null;
      size--;
    }

    private void unlink(int e) {
      int p = prev[e];
      int n = next[e];
      if (p >= 0) {
        next[p] = n;
      } else {
        head = n;
      }
      if (n >= 0) {
        prev[n] = p;
      } else {
        tail = p;
      }
    }

    private void pushFront(int e) {
      prev[e] = -1;
      next[e] = head;
      if (head >= 0) {
        prev[head] = e;
      }
      head = e;
      if (tail < 0) {
        tail = e;
      }
    }

    synchronized void evictFile(long fileNumber) {
      for (int e = size - 1; e >= 0; e--) {
        if ((keys[e] >>> 40) == fileNumber) {
          remove(e);
        }
      }
    }

    synchronized long usage() {
      return usage;
    }
  }
}
