package io.cobble.read;

import io.cobble.iterator.KvIterator;
import io.cobble.iterator.LevelIterator;
import io.cobble.iterator.PrefixIterator;
import io.cobble.iterator.RowMergingIterator;
import io.cobble.memtable.AdaptiveMemTable;
import io.cobble.memtable.MemTable;
import io.cobble.row.ColumnLayout;
import io.cobble.row.ValueLoader;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The merged sources of one scan over a {@link Version}: a cursor per memtable, per level-0 file
 * and per deeper level, merged by one {@link RowMergingIterator}. Each thread keeps one set for
 * reuse ({@link #acquire}); a scan that closes returns it ({@link #release}), so the next scan on
 * that thread reopens the same table and level cursors and the same merge instead of allocating
 * them. A scan opened while the thread's set is in use (nested or still-open cursors) gets a set of
 * its own.
 */
public final class ScanSources {
  private static final ThreadLocal<ScanSources> POOL =
      ThreadLocal.withInitial(() -> new ScanSources(true));

  private final boolean pooled;
  // Set by the owning thread in acquire, cleared by whichever thread closes the scan: volatile, so
  // the next acquire sees every write the closing thread made to the cursors.
  private volatile boolean inUse;
  private final RowMergingIterator merged = new RowMergingIterator();
  private KvIterator[] sources = new KvIterator[8];
  private String[] names = new String[8];
  private KvIterator[] tables = new KvIterator[4];
  private LevelIterator[] levels = new LevelIterator[4];
  private int sourceCount;
  // The memtable key prefix of the last family opened: the prefix iterators only read it.
  private byte[] family = {-1, -1};
  // A scan's bounds and in-place value spans, held while the set serves it: reused by the next.
  private final ScanBounds bounds = new ScanBounds();
  private long[] spans = new long[0];

  private ScanSources(boolean pooled) {
    this.pooled = pooled;
  }

  /**
   * A set of its own for a caller that never opens two scans at once (a thread's {@link
   * RangeProbe}): it skips the pool's thread-local lookup on each use.
   */
  static ScanSources unpooled() {
    return new ScanSources(false);
  }

  /** This thread's set when it is free, else a new one; give it back with {@link #release}. */
  public static ScanSources acquire() {
    ScanSources s = POOL.get();
    if (s.inUse) {
      return new ScanSources(false);
    }
    s.inUse = true;
    return s;
  }

  /**
   * Opens the sources of {@code layout}'s family in {@code version} (newest first: the active
   * memtable, the immutable ones, level-0 files, then each non-empty deeper level) and returns
   * their merge, unpositioned. Memtable keys carry the family id, which the cursors strip.
   */
  public RowMergingIterator open(Version version, ColumnLayout layout, ValueLoader loader) {
    return open(version, layout, loader, null, null);
  }

  /**
   * As {@link #open(Version, ColumnLayout, ValueLoader)} for a scan that reads only keys in {@code
   * [lo, hi)} (tree keys, null = unbounded): level-0 files and deeper levels with no key in that
   * range are left out, and so are those whose {@link io.cobble.sst.PrefixFilter} rules the range
   * out, and memtables whose {@link MemTable#mayHold} does, so a short per-key scan seeks only the
   * sources that can hold its rows instead of every memtable and table of the tree. Leaving them
   * out changes no row: a source without a key in the range contributes nothing, not even an older
   * version to merge under.
   */
  public RowMergingIterator open(
      Version version, ColumnLayout layout, ValueLoader loader, byte[] lo, byte[] hi) {
    choose(version, layout, lo, hi);
    return merge(layout, loader);
  }

  /**
   * Chooses the sources {@link #open(Version, ColumnLayout, ValueLoader, byte[], byte[])} merges,
   * without merging them: {@link #source} reads them one at a time, and {@link #merge} merges them
   * when one at a time does not do.
   */
  void choose(Version version, ColumnLayout layout, byte[] lo, byte[] hi) {
    int familyId = layout.familyId();
    if (family[0] != (byte) (familyId >>> 8) || family[1] != (byte) familyId) {
      family = new byte[] {(byte) (familyId >>> 8), (byte) familyId};
    }
    int count = 0;
    if (version.active().mayHold(familyId, lo, hi)) {
      add(count++, new PrefixIterator(memIterator(version.active()), family), null);
    }
    // By index: a for-each would allocate the unmodifiable list's iterator on every scan.
    List<MemTable> immutables = version.immutables();
    for (int i = 0; i < immutables.size(); i++) {
      MemTable m = immutables.get(i);
      if (m.mayHold(familyId, lo, hi)) {
        add(count++, new PrefixIterator(memIterator(m), family), null);
      }
    }
    if (layout.familyId() < version.trees().size()) {
      Tree tree = version.tree(layout.familyId());
      List<FileMeta> level0 = tree.level(0);
      if (tables.length < level0.size()) {
        tables = Arrays.copyOf(tables, level0.size());
      }
      for (int i = 0; i < level0.size(); i++) {
        FileMeta f = level0.get(i);
        if (outside(f, lo, hi) || !f.table().mayHoldRange(lo, hi)) {
          continue;
        }
        tables[i] = f.iterator(0, tables[i]);
        add(count++, tables[i], f.table().name());
      }
      if (levels.length < tree.levelCount()) {
        levels = Arrays.copyOf(levels, tree.levelCount());
      }
      for (int level = 1; level < tree.searchedLevels(); level++) {
        if (levelMayHold(tree.level(level), lo, hi)) {
          LevelIterator it = levels[level];
          levels[level] =
              it == null ? new LevelIterator(tree.level(level), 0) : it.reset(tree.level(level));
          add(count++, levels[level], null);
        }
      }
    }
    sourceCount = count;
  }

  /** The merge of the sources {@link #choose} chose, unpositioned. */
  RowMergingIterator merge(ColumnLayout layout, ValueLoader loader) {
    // The pooled merge starts each scan decoding rows; a scan that reads them in place turns
    // pass-through on.
    return merged.reset(sources, names, sourceCount, layout, loader).passThrough(false);
  }

  private static boolean outside(FileMeta f, byte[] lo, byte[] hi) {
    return (lo != null && Bytes.compare(f.largest(), lo) < 0)
        || (hi != null && Bytes.compare(f.smallest(), hi) >= 0);
  }

  /**
   * Whether a level (sorted, non-overlapping files) may hold a key of [lo, hi): some file's range
   * meets it and, when exactly one does, that file's prefix filter admits it.
   */
  private static boolean levelMayHold(List<FileMeta> files, byte[] lo, byte[] hi) {
    int from = firstOverlap(files, lo, hi);
    if (from < 0) {
      return false;
    }
    boolean onlyOne =
        hi != null
            && (from + 1 == files.size() || Bytes.compare(files.get(from + 1).smallest(), hi) >= 0);
    return !onlyOne || files.get(from).table().mayHoldRange(lo, hi);
  }

  /** The first file of a level whose range meets [lo, hi), or -1. */
  private static int firstOverlap(List<FileMeta> files, byte[] lo, byte[] hi) {
    int from = 0;
    if (lo != null) {
      // The first file that ends at or after lo, as the level iterator's seek finds it.
      int end = files.size();
      while (from < end) {
        int mid = (from + end) >>> 1;
        if (Bytes.compare(files.get(mid).largest(), lo) < 0) {
          from = mid + 1;
        } else {
          end = mid;
        }
      }
    }
    return from < files.size() && (hi == null || Bytes.compare(files.get(from).smallest(), hi) < 0)
        ? from
        : -1;
  }

  /**
   * Buffers for the tree keys that bound the scan this set serves: they stay valid until the set is
   * released, and the next scan builds its own in them.
   */
  public ScanBounds bounds() {
    return bounds;
  }

  /** An array of at least {@code n} longs for the scan this set serves, valid until release. */
  public long[] spans(int n) {
    if (spans.length < n) {
      spans = new long[n];
    }
    return spans;
  }

  /** The sources the last {@link #open} chose, newest first; valid until {@link #release}. */
  KvIterator source(int i) {
    return sources[i];
  }

  /** How many sources the last {@link #open} chose. */
  int sourceCount() {
    return sourceCount;
  }

  private void add(int i, KvIterator source, String name) {
    if (i == sources.length) {
      sources = Arrays.copyOf(sources, 2 * i);
      names = Arrays.copyOf(names, 2 * i);
    }
    sources[i] = source;
    names[i] = name;
  }

  private static KvIterator memIterator(MemTable m) {
    return m instanceof AdaptiveMemTable ? ((AdaptiveMemTable) m).scanIterator() : m.iterator();
  }

  /**
   * Closes every source (unpinning the blocks they stand on), drops the references to the scan's
   * version, and makes this thread's set available to its next scan.
   */
  public void release() {
    // The chosen sources, merged or not (a range probe may never merge them).
    for (int i = 0; i < sourceCount; i++) {
      sources[i].close();
    }
    merged.clear();
    Arrays.fill(sources, null);
    Arrays.fill(names, null);
    sourceCount = 0;
    for (LevelIterator level : levels) {
      if (level != null) {
        level.reset(Collections.emptyList());
      }
    }
    if (pooled) {
      inUse = false;
    }
  }
}
