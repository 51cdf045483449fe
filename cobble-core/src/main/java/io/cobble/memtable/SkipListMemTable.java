package io.cobble.memtable;

import io.cobble.util.ValueSink;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ordered memtable: a skiplist whose nodes are array slots. Node {@code n} stores its record
 * address in {@code records[n]}, its forward links in {@code links[linkBase[n] + level]} and its
 * key's normalized form ({@link Arena#normalizedKey}) in {@code words[2n]} and {@code words[2n +
 * 1]}. A search compares those words, so a step costs a load from the node's slot instead of three
 * dependent loads of the record in the arena; it reads the record only where the words tie (keys
 * sharing their first 15 bytes), as the last steps of a search within one map state's entries do.
 *
 * <p>Lock-free reads (see {@link MemTable}): a new node's record, link base and own links are
 * written first, then it is spliced in level by level from the bottom with release stores, so a
 * reader that reaches it at any level finds it complete and linked below. An update release-stores
 * the new record's address into the node. Readers load links and records with acquire loads and
 * re-read the (volatile) arrays after each, so an array replaced by a bigger copy is never indexed
 * with a node it does not hold.
 *
 * <p>Cursors read the memtable as it was when they were created. An update appends the key's new
 * row as a record that keeps the address of the row it replaced, and every put ends by publishing
 * its record's address; a cursor notes the newest published address and, since arena addresses grow
 * in append order, steps from a node's record back to the newest one at or below that mark, and
 * skips nodes that have none (keys inserted later). This costs a store per put and eight bytes per
 * update, and nothing on a cursor's path but for keys written after it opened.
 */
public class SkipListMemTable extends MemTable {
  private static final int MAX_HEIGHT = 12;
  private static final int HEAD = 0;
  private static final VarHandle PUBLISHED;

  static {
    try {
      PUBLISHED =
          MethodHandles.lookup().findVarHandle(SkipListMemTable.class, "published", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Arena arena = new Arena();
  private volatile long[] records = new long[1024];
  private volatile long[] words = new long[2048];
  private volatile int[] linkBase = new int[1024];
  private volatile int[] links = new int[4096];
  private volatile int nodeCount;
  private int linkCount;
  private volatile int height = 1;
  private final int[] prev = new int[MAX_HEIGHT];
  // Address of the newest record whose put completed; release-stored by the writer, read with an
  // acquire load by a cursor when it is created.
  private long published = Arena.NONE;

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
      words = Arrays.copyOf(words, 2 * n);
    }
    int[] l = links;
    if (linkCount + h > l.length) {
      l = Arrays.copyOf(l, Math.max(l.length * 2, linkCount + h));
      links = l;
    }
    records[node] = record;
    if (record != -1L) {
      arena.normalizedKey(record, words, 2 * node);
    }
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

  /**
   * Returns the first node with key >= target and fills {@link #prev} when requested; {@code (high,
   * low)} is the target's normalized form ({@link Arena#normalizedHigh}, {@link
   * Arena#normalizedLow}).
   */
  private int findGreaterOrEqual(byte[] key, int keyLen, long high, long low, boolean fillPrev) {
    int x = HEAD;
    for (int level = height - 1; level >= 0; level--) {
      while (true) {
        int n = link(x, level);
        if (n >= 0 && compareNode(n, high, low, key, keyLen) < 0) {
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

  /**
   * Compares node {@code n}'s key with {@code key}, whose normalized form is {@code (high, low)}:
   * by the node's words, and by its record only where they tie. A node reached through an acquire
   * load of a link was complete before it was linked, words included, and {@link #words} is read
   * after that load, so it holds them.
   */
  private int compareNode(int n, long high, long low, byte[] key, int keyLen) {
    long[] w = words;
    long nodeHigh = w[2 * n];
    if (nodeHigh != high) {
      return Long.compareUnsigned(nodeHigh, high);
    }
    long nodeLow = w[2 * n + 1];
    if (nodeLow != low) {
      return Long.compareUnsigned(nodeLow, low);
    }
    // Equal forms of keys shorter than 15 bytes are equal keys; longer ones tie on 15 bytes only.
    if ((low & 0xFF) < Arena.NORMALIZED_BYTES) {
      return 0;
    }
    return arena.compareKey(record(n), key, keyLen);
  }

  /**
   * The node holding exactly {@code key}, or -1: a node whose words differ from the key's answers
   * no without a load from the arena.
   */
  private int findExact(byte[] key, int keyLen, boolean fillPrev) {
    long high = Arena.normalizedHigh(key, 0, keyLen);
    long low = Arena.normalizedLow(key, 0, keyLen);
    int n = findGreaterOrEqual(key, keyLen, high, low, fillPrev);
    return n >= 0 && compareNode(n, high, low, key, keyLen) == 0 ? n : -1;
  }

  /** Appends the fold of a delta onto the key's row at {@code older}; returns its address. */
  private long combined(byte[] key, int keyLen, long older, byte[] row, int rowLen) {
    byte[] combined = combiner.combine(key, arena.value(older), Arrays.copyOf(row, rowLen));
    return arena.add(key, keyLen, combined, 0, combined.length, older);
  }

  @Override
  protected void doPut(byte[] key, int keyLen, byte[] row, int rowLen, boolean replacesOlder) {
    int n = findExact(key, keyLen, true);
    if (n >= 0) {
      long older = records[n];
      long addr =
          replacesOlder
              ? arena.add(key, keyLen, row, 0, rowLen, older)
              : combined(key, keyLen, older, row, rowLen);
      LONGS.setRelease(records, n, addr);
      PUBLISHED.setRelease(this, addr);
      return;
    }
    int h = randomHeight();
    if (h > height) {
      for (int l = height; l < h; l++) {
        prev[l] = HEAD;
      }
    }
    long addr = arena.add(key, keyLen, row, 0, rowLen);
    int node = newNode(addr, h);
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
    PUBLISHED.setRelease(this, addr);
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
    int n = findExact(key, keyLen, false);
    return n >= 0 ? arena.value(record(n)) : null;
  }

  @Override
  protected boolean doGet(byte[] key, int keyLen, ValueSink sink) {
    int n = findExact(key, keyLen, false);
    if (n >= 0) {
      arena.valueTo(record(n), sink);
      return true;
    }
    return false;
  }

  @Override
  protected long doApproximateBytes() {
    return arena.usedBytes() + (long) nodeCount * 28 + (long) linkCount * 4;
  }

  @Override
  public int entryCount() {
    return nodeCount - 1;
  }

  @Override
  protected Cursor cursor() {
    return new SnapshotCursor((long) PUBLISHED.getAcquire(this));
  }

  /** Reads the rows as of the moment the newest record was {@code mark}. */
  private final class SnapshotCursor implements Cursor {
    private final long mark;
    private int node = -1;
    private long record;

    SnapshotCursor(long mark) {
      this.mark = mark;
    }

    /** Moves on from {@code n} to the first node that has a row at the mark. */
    private void settle(int n) {
      while (n >= 0) {
        long r = record(n);
        while (r > mark) {
          r = arena.older(r);
        }
        if (r != Arena.NONE) {
          record = r;
          break;
        }
        n = link(n, 0);
      }
      node = n;
    }

    @Override
    public void seekToFirst() {
      settle(link(HEAD, 0));
    }

    @Override
    public void seek(byte[] target) {
      settle(
          findGreaterOrEqual(
              target,
              target.length,
              Arena.normalizedHigh(target, 0, target.length),
              Arena.normalizedLow(target, 0, target.length),
              false));
    }

    @Override
    public boolean valid() {
      return node >= 0;
    }

    @Override
    public void next() {
      settle(link(node, 0));
    }

    @Override
    public byte[] key() {
      return arena.key(record);
    }

    @Override
    public byte[] value() {
      return arena.value(record);
    }

    @Override
    public void visit(RowVisitor visitor) {
      arena.recordTo(record, visitor);
    }
  }

  /**
   * Fills this empty, not yet shared skiplist with the combined rows of a cursor over unique keys
   * in order (the adaptive memtable's conversion): each node is linked after the last one at each
   * of its levels, with no search.
   */
  void loadSorted(Cursor rows) {
    int[] last = new int[MAX_HEIGHT];
    for (rows.seekToFirst(); rows.valid(); rows.next()) {
      byte[] key = rows.key();
      byte[] row = rows.value();
      int h = randomHeight();
      int node = newNode(arena.add(key, key.length, row, 0, row.length), h);
      int[] l = links;
      int[] base = linkBase;
      for (int level = 0; level < h; level++) {
        l[base[last[level]] + level] = node;
        last[level] = node;
      }
      if (h > height) {
        height = h;
      }
    }
    if (nodeCount > 1) {
      PUBLISHED.setRelease(this, records[nodeCount - 1]);
    }
  }
}
