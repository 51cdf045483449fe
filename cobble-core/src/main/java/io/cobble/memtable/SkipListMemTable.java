package io.cobble.memtable;

import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ordered memtable: a skiplist whose nodes are array slots. Node {@code n} stores its record
 * address in {@code records[n]} and its forward links in {@code links[linkBase[n] + level]}.
 */
public class SkipListMemTable extends MemTable {
  private static final int MAX_HEIGHT = 12;
  private static final int HEAD = 0;

  private final Arena arena = new Arena();
  private long[] records = new long[1024];
  private int[] linkBase = new int[1024];
  private byte[] heights = new byte[1024];
  private int[] links = new int[4096];
  private int nodeCount;
  private int linkCount;
  private int height = 1;
  private final int[] prev = new int[MAX_HEIGHT];

  public SkipListMemTable(long id, RowCombiner combiner) {
    super(id, combiner);
    newNode(-1L, MAX_HEIGHT);
  }

  private int newNode(long record, int h) {
    if (nodeCount == records.length) {
      int n = records.length * 2;
      records = Arrays.copyOf(records, n);
      linkBase = Arrays.copyOf(linkBase, n);
      heights = Arrays.copyOf(heights, n);
    }
    if (linkCount + h > links.length) {
      links = Arrays.copyOf(links, Math.max(links.length * 2, linkCount + h));
    }
    int node = nodeCount++;
    records[node] = record;
    linkBase[node] = linkCount;
    heights[node] = (byte) h;
    Arrays.fill(links, linkCount, linkCount + h, -1);
    linkCount += h;
    return node;
  }

  private int link(int node, int level) {
    return links[linkBase[node] + level];
  }

  /** Returns the first node with key >= target and fills {@link #prev} when requested. */
  private int findGreaterOrEqual(byte[] key, int keyLen, boolean fillPrev) {
    int x = HEAD;
    for (int level = height - 1; level >= 0; level--) {
      while (true) {
        int n = link(x, level);
        if (n >= 0 && arena.compareKey(records[n], key, keyLen) < 0) {
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

  @Override
  protected void doPut(byte[] key, int keyLen, byte[] row, int rowLen) {
    int n = findGreaterOrEqual(key, keyLen, true);
    if (n >= 0 && arena.compareKey(records[n], key, keyLen) == 0) {
      byte[] combined = combiner.combine(key, arena.value(records[n]), Arrays.copyOf(row, rowLen));
      records[n] = arena.add(key, keyLen, combined, 0, combined.length);
      return;
    }
    int h = randomHeight();
    if (h > height) {
      for (int l = height; l < h; l++) {
        prev[l] = HEAD;
      }
      height = h;
    }
    int node = newNode(arena.add(key, keyLen, row, 0, rowLen), h);
    for (int l = 0; l < h; l++) {
      links[linkBase[node] + l] = link(prev[l], l);
      links[linkBase[prev[l]] + l] = node;
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
    if (n >= 0 && arena.compareKey(records[n], key, keyLen) == 0) {
      return arena.value(records[n]);
    }
    return null;
  }

  @Override
  protected long doApproximateBytes() {
    return arena.usedBytes() + (long) nodeCount * 13 + (long) linkCount * 4;
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
        return arena.key(records[node]);
      }

      @Override
      public byte[] value() {
        return arena.value(records[node]);
      }
    };
  }

  /** Replays an already combined row (used when the adaptive memtable converts). */
  void load(byte[] key, byte[] row) {
    doPut(key, key.length, row, row.length);
  }
}
