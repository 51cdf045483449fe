package io.cobble.memtable;

import io.cobble.util.ValueSink;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ordered memtable: a skiplist whose nodes are array slots. Node {@code n} stores its record
 * address in {@code records[n]} and its forward links in {@code links[linkBase[n] + level]}.
 *
 * <p>Lock-free reads (see {@link MemTable}): a new node's record, link base and own links are
 * written first, then it is spliced in level by level from the bottom with release stores, so a
 * reader that reaches it at any level finds it complete and linked below. An update release-stores
 * the new record's address into the node. Readers load links and records with acquire loads and
 * re-read the (volatile) arrays after each, so an array replaced by a bigger copy is never indexed
 * with a node it does not hold.
 */
public class SkipListMemTable extends MemTable {
  private static final int MAX_HEIGHT = 12;
  private static final int HEAD = 0;

  private final Arena arena = new Arena();
  private volatile long[] records = new long[1024];
  private volatile int[] linkBase = new int[1024];
  private volatile int[] links = new int[4096];
  private volatile int nodeCount;
  private int linkCount;
  private volatile int height = 1;
  private final int[] prev = new int[MAX_HEIGHT];

  public SkipListMemTable(long id, RowCombiner combiner) {
    super(id, combiner);
    newNode(-1L, MAX_HEIGHT);
  }

  /** Creates an unlinked node (invisible to readers until {@link #doPut} splices it in). */
  private int newNode(long record, int h) {
    int node = nodeCount;
    if (node == records.length) {
      int n = records.length * 2;
      linkBase = Arrays.copyOf(linkBase, n);
      records = Arrays.copyOf(records, n);
    }
    int[] l = links;
    if (linkCount + h > l.length) {
      l = Arrays.copyOf(l, Math.max(l.length * 2, linkCount + h));
      links = l;
    }
    records[node] = record;
    linkBase[node] = linkCount;
    Arrays.fill(l, linkCount, linkCount + h, -1);
    linkCount += h;
    nodeCount = node + 1;
    return node;
  }

  private int link(int node, int level) {
    return (int) INTS.getAcquire(links, linkBase[node] + level);
  }

  private long record(int node) {
    return (long) LONGS.getAcquire(records, node);
  }

  /** Returns the first node with key >= target and fills {@link #prev} when requested. */
  private int findGreaterOrEqual(byte[] key, int keyLen, boolean fillPrev) {
    int x = HEAD;
    for (int level = height - 1; level >= 0; level--) {
      while (true) {
        int n = link(x, level);
        if (n >= 0 && arena.compareKey(record(n), key, keyLen) < 0) {
          x = n;
        } else {
          if (fillPrev) {
            prev[level] = x;
          }
          if (level == 0) {
            return n;
          }
          break;
        }
      }
    }
    return -1;
  }

  /** Appends the fold of a delta onto the key's older row; returns its address. */
  private long combined(byte[] key, int keyLen, byte[] older, byte[] row, int rowLen) {
    byte[] combined = combiner.combine(key, older, Arrays.copyOf(row, rowLen));
    return arena.add(key, keyLen, combined, 0, combined.length);
  }

  @Override
  protected void doPut(byte[] key, int keyLen, byte[] row, int rowLen, boolean replacesOlder) {
    int n = findGreaterOrEqual(key, keyLen, true);
    if (n >= 0 && arena.compareKey(records[n], key, keyLen) == 0) {
      long addr =
          replacesOlder
              ? arena.add(key, keyLen, row, 0, rowLen)
              : combined(key, keyLen, arena.value(records[n]), row, rowLen);
      LONGS.setRelease(records, n, addr);
      return;
    }
    int h = randomHeight();
    if (h > height) {
      for (int l = height; l < h; l++) {
        prev[l] = HEAD;
      }
    }
    int node = newNode(arena.add(key, keyLen, row, 0, rowLen), h);
    int[] l = links;
    int[] base = linkBase;
    int own = base[node];
    for (int level = 0; level < h; level++) {
      l[own + level] = l[base[prev[level]] + level];
    }
    for (int level = 0; level < h; level++) {
      INTS.setRelease(l, base[prev[level]] + level, node);
    }
    if (h > height) {
      height = h;
    }
  }

  private static int randomHeight() {
    int h = 1;
    ThreadLocalRandom r = ThreadLocalRandom.current();
    while (h < MAX_HEIGHT && (r.nextInt() & 3) == 0) {
      h++;
    }
    return h;
  }

  @Override
  protected byte[] doGet(byte[] key, int keyLen) {
    int n = findGreaterOrEqual(key, keyLen, false);
    if (n >= 0) {
      long r = record(n);
      if (arena.compareKey(r, key, keyLen) == 0) {
        return arena.value(r);
      }
    }
    return null;
  }

  @Override
  protected boolean doGet(byte[] key, int keyLen, ValueSink sink) {
    int n = findGreaterOrEqual(key, keyLen, false);
    if (n >= 0) {
      long r = record(n);
      if (arena.compareKey(r, key, keyLen) == 0) {
        arena.valueTo(r, sink);
        return true;
      }
    }
    return false;
  }

  @Override
  protected long doApproximateBytes() {
    return arena.usedBytes() + (long) nodeCount * 12 + (long) linkCount * 4;
  }

  @Override
  public int entryCount() {
    return nodeCount - 1;
  }

  @Override
  protected Cursor cursor() {
    return new Cursor() {
      private int node = -1;

      @Override
      public void seekToFirst() {
        node = link(HEAD, 0);
      }

      @Override
      public void seek(byte[] target) {
        node = findGreaterOrEqual(target, target.length, false);
      }

      @Override
      public boolean valid() {
        return node >= 0;
      }

      @Override
      public void next() {
        node = link(node, 0);
      }

      @Override
      public byte[] key() {
        return arena.key(record(node));
      }

      @Override
      public byte[] value() {
        return arena.value(record(node));
      }
    };
  }

  /** Replays an already combined row (used when the adaptive memtable converts). */
  void load(byte[] key, byte[] row) {
    doPut(key, key.length, row, row.length, false);
  }
}
