package io.cobble.version;

import io.cobble.util.Bytes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The files of one column family by level. L0 files may overlap and are ordered newest first; files
 * of L1 and deeper never overlap and are ordered by smallest key. Immutable.
 */
public final class Tree {
  private final List<List<FileMeta>> levels;
  // The point read's view, held flat so a probe chases no list wrappers: each level's files and
  // their key bounds, up to the deepest level with a file.
  private final FileMeta[][] files;
  private final byte[][][] smallest;
  private final byte[][][] largest;

  public Tree(List<List<FileMeta>> levels) {
    List<List<FileMeta>> copy = new ArrayList<>();
    int searched = 0;
    for (List<FileMeta> l : levels) {
      copy.add(Collections.unmodifiableList(new ArrayList<>(l)));
      if (!l.isEmpty()) {
        searched = copy.size();
      }
    }
    this.levels = Collections.unmodifiableList(copy);
    files = new FileMeta[searched][];
    smallest = new byte[searched][][];
    largest = new byte[searched][][];
    for (int level = 0; level < searched; level++) {
      FileMeta[] f = copy.get(level).toArray(new FileMeta[0]);
      files[level] = f;
      smallest[level] = new byte[f.length][];
      largest[level] = new byte[f.length][];
      for (int i = 0; i < f.length; i++) {
        smallest[level][i] = f[i].smallest();
        largest[level][i] = f[i].largest();
      }
    }
  }

  public static Tree empty(int maxLevels) {
    List<List<FileMeta>> l = new ArrayList<>();
    for (int i = 0; i < maxLevels; i++) {
      l.add(new ArrayList<>());
    }
    return new Tree(l);
  }

  public int levelCount() {
    return levels.size();
  }

  public List<FileMeta> level(int level) {
    return levels.get(level);
  }

  public long levelBytes(int level) {
    long n = 0;
    for (FileMeta f : levels.get(level)) {
      n += f.size();
    }
    return n;
  }

  /** Levels a point read searches: up to the deepest one holding a file (none when empty). */
  public int searchedLevels() {
    return files.length;
  }

  /** The L0 file at {@code i} (newest first) if its key range holds {@code key}, else null. */
  public FileMeta level0Holding(int i, byte[] key) {
    return Bytes.compare(smallest[0][i], key) <= 0 && Bytes.compare(largest[0][i], key) >= 0
        ? files[0][i]
        : null;
  }

  /** L0's file count; a point read asks {@link #level0Holding} for each. */
  public int level0Count() {
    return files.length == 0 ? 0 : files[0].length;
  }

  /** The file of a sorted level (L1+) that may contain {@code key}, or null. */
  public FileMeta find(int level, byte[] key) {
    if (level >= files.length) {
      return null;
    }
    byte[][] last = largest[level];
    int lo = 0;
    int hi = last.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Bytes.compare(last[mid], key) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo < last.length && Bytes.compare(smallest[level][lo], key) <= 0) {
      return files[level][lo];
    }
    return null;
  }

  public List<FileMeta> overlapping(int level, byte[] lo, byte[] hi) {
    List<FileMeta> out = new ArrayList<>();
    for (FileMeta f : levels.get(level)) {
      if (f.overlaps(lo, hi)) {
        out.add(f);
      }
    }
    return out;
  }

  public List<FileMeta> allFiles() {
    List<FileMeta> out = new ArrayList<>();
    for (List<FileMeta> l : levels) {
      out.addAll(l);
    }
    return out;
  }

  /**
   * Returns a copy with {@code removed} taken out and {@code added} put at their levels; a removed
   * file with {@code replacements} is replaced by them where it was.
   */
  Tree apply(
      List<FileMeta> removed,
      List<int[]> addedLevels,
      List<FileMeta> added,
      Map<FileMeta, List<FileMeta>> replacements) {
    List<List<FileMeta>> l = new ArrayList<>();
    for (List<FileMeta> files : levels) {
      List<FileMeta> keep = new ArrayList<>();
      for (FileMeta f : files) {
        List<FileMeta> by = replacements.get(f);
        if (by != null) {
          keep.addAll(by);
        } else if (!removed.contains(f)) {
          keep.add(f);
        }
      }
      l.add(keep);
    }
    for (int i = 0; i < added.size(); i++) {
      int level = addedLevels.get(i)[0];
      if (level == 0) {
        l.get(0).add(0, added.get(i));
      } else {
        l.get(level).add(added.get(i));
      }
    }
    for (int level = 1; level < l.size(); level++) {
      l.get(level).sort((a, b) -> Bytes.compare(a.smallest(), b.smallest()));
    }
    return new Tree(l);
  }
}
