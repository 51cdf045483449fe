package io.cobble.compaction;

import io.cobble.CompactionPolicy;
import io.cobble.Config;
import io.cobble.memtable.MemTable;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Chooses the next compaction of a tree. Order: whole-file drops of fully expired files, then L0
 * (tiered: all L0 files at once when their count reaches {@code l0-file-limit}), then the leveled
 * part (L1+), where a level is due when its size exceeds its target ({@code level-base-size ×
 * multiplier^(n-1)}); under score_priority a due level whose score beats L0's (file count over the
 * limit) goes before L0. The policy decides which due level and which file:
 *
 * <ul>
 *   <li>score_priority: the level with the highest size/target score; the file with the least
 *       overlap in the next level.
 *   <li>min_overlap: the shallowest due level; the file with the least overlap.
 *   <li>round_robin: the shallowest due level; files in key order, resuming after the last one.
 * </ul>
 *
 * <p>The picker knows which buckets the shard owns ({@link OwnedBuckets}). A file whose span
 * crosses a bucket the shard gave up (a shrink keeps files as they are) is never moved without
 * rewriting, and when nothing else is due such a file is rewritten where it lies ({@link
 * Compaction.Kind#CLEANUP}, if {@code compaction.foreign-bucket-cleanup} is on), so given-up rows
 * do not stay forever in files no merge reaches.
 */
public final class CompactionPicker {
  /** Nothing is held back from cleanup (manual runs, and shards that own all their files). */
  public static final CleanupHold NOTHING_HELD = new CleanupHold(n -> false);

  private final Config config;
  private final Map<Long, byte[]> roundRobinCursor = new ConcurrentHashMap<>();

  public CompactionPicker(Config config) {
    this.config = config;
  }

  public long levelTarget(int level) {
    long t = config.levelBaseSize();
    for (int i = 1; i < level; i++) {
      t =
          t > Long.MAX_VALUE / config.levelSizeMultiplier()
              ? Long.MAX_VALUE
              : t * config.levelSizeMultiplier();
    }
    return t;
  }

  /** Highest compaction score of the tree: ≥ 1 means work is due. */
  public double score(Tree tree) {
    double best = tree.level(0).size() / (double) config.l0FileLimit();
    for (int level = 1; level < tree.levelCount() - 1; level++) {
      best = Math.max(best, tree.levelBytes(level) / (double) levelTarget(level));
    }
    return best;
  }

  public Compaction pick(Version v, int family, long now, OwnedBuckets owned) {
    return pick(v, family, now, owned, NOTHING_HELD);
  }

  /**
   * As {@link #pick(Version, int, long, OwnedBuckets)}; the cleanup leaves the files {@code hold}
   * holds as they are.
   */
  public Compaction pick(Version v, int family, long now, OwnedBuckets owned, CleanupHold hold) {
    Tree tree = v.tree(family);
    Compaction drop = pickExpired(v, tree, family, now);
    if (drop != null) {
      return drop;
    }
    int level = dueLevel(tree);
    if (tree.level(0).size() >= config.l0FileLimit() && !outscoresL0(tree, level)) {
      return l0Compaction(v, tree, family, now, owned);
    }
    if (level < 0) {
      return config.foreignBucketCleanup() ? pickCleanup(v, family, owned, hold) : null;
    }
    List<FileMeta> files = tree.level(level);
    FileMeta chosen;
    if (config.compactionPolicy() == CompactionPolicy.ROUND_ROBIN) {
      long cursorKey = ((long) family << 8) | level;
      byte[] after = roundRobinCursor.get(cursorKey);
      chosen = files.get(0);
      if (after != null) {
        for (FileMeta f : files) {
          if (Bytes.compare(f.smallest(), after) > 0) {
            chosen = f;
            break;
          }
        }
      }
      roundRobinCursor.put(cursorKey, chosen.largest());
    } else {
      chosen = files.get(0);
      long best = Long.MAX_VALUE;
      for (FileMeta f : files) {
        long overlap = 0;
        for (FileMeta o : tree.overlapping(level + 1, f.smallest(), f.largest())) {
          overlap += o.size();
        }
        if (overlap < best) {
          best = overlap;
          chosen = f;
        }
      }
    }
    return leveled(v, tree, family, level, Collections.singletonList(chosen), now, owned);
  }

  /**
   * Whether score_priority compacts {@code level} before a due L0: when its size/target score
   * exceeds L0's file count/limit. Under a sustained write L0 is due again by the time each L0
   * merge ends, so taking L0 first always would never push L1 down: L1 would grow with the data and
   * every L0 merge rewrite all of it.
   */
  private boolean outscoresL0(Tree tree, int level) {
    return level > 0
        && config.compactionPolicy() == CompactionPolicy.SCORE_PRIORITY
        && tree.levelBytes(level) / (double) levelTarget(level)
            > tree.level(0).size() / (double) config.l0FileLimit();
  }

  private int dueLevel(Tree tree) {
    int due = -1;
    double best = 1.0;
    for (int level = 1; level < tree.levelCount() - 1; level++) {
      double s = tree.levelBytes(level) / (double) levelTarget(level);
      if (s < 1.0) {
        continue;
      }
      if (config.compactionPolicy() != CompactionPolicy.SCORE_PRIORITY) {
        return level;
      }
      if (s >= best) {
        best = s;
        due = level;
      }
    }
    return due;
  }

  /**
   * Every L0 file of the tree merged into L1 (moved there when one file overlaps nothing), whatever
   * the L0 count; null when L0 is empty. Deeper levels stay as they are.
   */
  public Compaction pickLevel0(Version v, int family, long now, OwnedBuckets owned) {
    Tree tree = v.tree(family);
    return tree.level(0).isEmpty() ? null : l0Compaction(v, tree, family, now, owned);
  }

  /**
   * Forces data down until a tree lives in one level, then rewrites files holding given-up buckets
   * (used by {@code Db.compactAll}).
   */
  public Compaction pickManual(Version v, int family, long now, OwnedBuckets owned) {
    Tree tree = v.tree(family);
    if (!tree.level(0).isEmpty()) {
      return l0Compaction(v, tree, family, now, owned);
    }
    for (int level = 1; level < tree.levelCount() - 1; level++) {
      if (tree.level(level).isEmpty()) {
        continue;
      }
      for (int deeper = level + 1; deeper < tree.levelCount(); deeper++) {
        if (!tree.level(deeper).isEmpty()) {
          return leveled(v, tree, family, level, tree.level(level), now, owned);
        }
      }
      break;
    }
    return pickCleanup(v, family, owned);
  }

  /**
   * The first file (shallowest level first) whose span crosses a bucket the shard does not own, to
   * be rewritten where it lies with only the owned rows; null when every file is clean. The rewrite
   * cuts its output at owned-range boundaries, so its files are clean and none is picked again.
   */
  public Compaction pickCleanup(Version v, int family, OwnedBuckets owned) {
    return pickCleanup(v, family, owned, NOTHING_HELD);
  }

  /** As {@link #pickCleanup(Version, int, OwnedBuckets)}, skipping the files {@code hold} holds. */
  public Compaction pickCleanup(Version v, int family, OwnedBuckets owned, CleanupHold hold) {
    Tree tree = v.tree(family);
    for (int level = 0; level < tree.levelCount(); level++) {
      for (FileMeta f : tree.level(level)) {
        if (!owned.holdsOnlyOwned(f) && !hold.holds(f.number())) {
          return new Compaction(
              Compaction.Kind.CLEANUP,
              family,
              level,
              level,
              Collections.singletonList(f),
              Collections.emptyList(),
              false,
              0);
        }
      }
    }
    return null;
  }

  private Compaction l0Compaction(Version v, Tree tree, int family, long now, OwnedBuckets owned) {
    List<FileMeta> inputs = tree.level(0);
    byte[][] range = range(inputs);
    List<FileMeta> overlaps = tree.overlapping(1, range[0], range[1]);
    if (inputs.size() == 1 && overlaps.isEmpty() && owned.holdsOnlyOwned(inputs.get(0))) {
      return new Compaction(Compaction.Kind.TRIVIAL_MOVE, family, 0, 1, inputs, overlaps, false, 0);
    }
    return new Compaction(
        Compaction.Kind.MERGE,
        family,
        0,
        1,
        new ArrayList<>(inputs),
        overlaps,
        isBottommost(tree, 1, range(inputs, overlaps)),
        dropBefore(v, tree, 0, inputs, now));
  }

  private Compaction leveled(
      Version v,
      Tree tree,
      int family,
      int level,
      List<FileMeta> inputs,
      long now,
      OwnedBuckets owned) {
    byte[][] range = range(inputs);
    List<FileMeta> overlaps = tree.overlapping(level + 1, range[0], range[1]);
    if (inputs.size() == 1 && overlaps.isEmpty() && owned.holdsOnlyOwned(inputs.get(0))) {
      return new Compaction(
          Compaction.Kind.TRIVIAL_MOVE, family, level, level + 1, inputs, overlaps, false, 0);
    }
    return new Compaction(
        Compaction.Kind.MERGE,
        family,
        level,
        level + 1,
        new ArrayList<>(inputs),
        overlaps,
        isBottommost(tree, level + 1, range(inputs, overlaps)),
        dropBefore(v, tree, level, inputs, now));
  }

  /**
   * The key range a compaction rewrites: overlapping output-level files can reach beyond the
   * inputs, and every key they hold is rewritten too.
   */
  private static byte[][] range(List<FileMeta> inputs, List<FileMeta> overlaps) {
    List<FileMeta> all = new ArrayList<>(inputs);
    all.addAll(overlaps);
    return range(all);
  }

  private static byte[][] range(List<FileMeta> files) {
    byte[] lo = null;
    byte[] hi = null;
    for (FileMeta f : files) {
      if (lo == null || Bytes.compare(f.smallest(), lo) < 0) {
        lo = f.smallest();
      }
      if (hi == null || Bytes.compare(f.largest(), hi) > 0) {
        hi = f.largest();
      }
    }
    return new byte[][] {lo, hi};
  }

  private static boolean isBottommost(Tree tree, int outputLevel, byte[][] range) {
    for (int level = outputLevel + 1; level < tree.levelCount(); level++) {
      if (!tree.overlapping(level, range[0], range[1]).isEmpty()) {
        return false;
      }
    }
    return true;
  }

  /**
   * min(now, oldest merge write time of every source newer than the rewritten data): memtables,
   * levels above {@code inputLevel}, and the input level's other files, whose keys can lie in an
   * overlapping output-level file that the compaction rewrites too.
   */
  private static long dropBefore(
      Version v, Tree tree, int inputLevel, List<FileMeta> inputs, long now) {
    long t = now;
    t = Math.min(t, v.active().minMergeWriteTime());
    for (MemTable m : v.immutables()) {
      t = Math.min(t, m.minMergeWriteTime());
    }
    for (int level = 0; level <= inputLevel; level++) {
      for (FileMeta f : tree.level(level)) {
        if (!inputs.contains(f)) {
          t = Math.min(t, f.properties().minMergeWriteTime());
        }
      }
    }
    return t;
  }

  /** A file whose values all expired, with nothing older underneath to resurface, is dropped. */
  private Compaction pickExpired(Version v, Tree tree, int family, long now) {
    for (int level = tree.levelCount() - 1; level >= 0; level--) {
      List<FileMeta> files = tree.level(level);
      for (int i = 0; i < files.size(); i++) {
        FileMeta f = files.get(i);
        long maxExpiry = f.properties().maxExpiry();
        if (maxExpiry == 0) {
          continue;
        }
        long before = dropBefore(v, tree, level, files, now);
        if (level == 0) {
          for (int j = 0; j < i; j++) {
            before = Math.min(before, files.get(j).properties().minMergeWriteTime());
          }
        }
        if (maxExpiry > before) {
          continue;
        }
        byte[][] range = {f.smallest(), f.largest()};
        boolean older = !isBottommost(tree, level, range);
        if (level == 0) {
          for (int j = i + 1; j < files.size() && !older; j++) {
            older = files.get(j).overlaps(range[0], range[1]);
          }
        }
        if (!older) {
          return new Compaction(
              Compaction.Kind.DROP_EXPIRED,
              family,
              level,
              level,
              Collections.singletonList(f),
              Collections.emptyList(),
              true,
              before);
        }
      }
    }
    return null;
  }
}
