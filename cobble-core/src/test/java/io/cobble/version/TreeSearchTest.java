package io.cobble.version;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.cobble.sst.TableProperties;
import io.cobble.util.Bytes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A point read's view of a tree ({@link Tree#find}, {@link Tree#level0Holding}, {@link
 * Tree#searchedLevels}) answers as a scan of the tree's level lists does, for random trees with
 * empty levels between and after the full ones, and after {@link Tree#apply} changes them.
 */
class TreeSearchTest {

  @Test
  void flatSearchAnswersAsTheLevelListsDo() {
    SplittableRandom random = new SplittableRandom(11);
    for (int round = 0; round < 300; round++) {
      Tree tree = randomTree(random);
      checkAgainstLists(tree, random);
      List<FileMeta> all = tree.allFiles();
      if (!all.isEmpty()) {
        FileMeta gone = all.get(random.nextInt(all.size()));
        Tree after =
            tree.apply(
                Collections.singletonList(gone),
                new ArrayList<>(),
                new ArrayList<>(),
                Collections.emptyMap());
        checkAgainstLists(after, random);
      }
    }
  }

  @Test
  void anEmptyTreeSearchesNoLevel() {
    Tree tree = Tree.empty(7);
    assertEquals(0, tree.searchedLevels());
    assertEquals(0, tree.level0Count());
    assertEquals(null, tree.find(3, key(5)));
  }

  private static void checkAgainstLists(Tree tree, SplittableRandom random) {
    int deepest = 0;
    for (int level = 0; level < tree.levelCount(); level++) {
      if (!tree.level(level).isEmpty()) {
        deepest = level + 1;
      }
    }
    assertEquals(deepest, tree.searchedLevels());
    assertEquals(tree.level(0).size(), tree.level0Count());
    for (int probe = 0; probe < 200; probe++) {
      byte[] k = key(random.nextInt(1200));
      for (int i = 0; i < tree.level0Count(); i++) {
        FileMeta f = tree.level(0).get(i);
        assertSame(f.contains(k) ? f : null, tree.level0Holding(i, k));
      }
      for (int level = 1; level < tree.levelCount(); level++) {
        FileMeta expected = null;
        for (FileMeta f : tree.level(level)) {
          if (f.contains(k)) {
            expected = f;
          }
        }
        assertSame(expected, tree.find(level, k), "level " + level + " key " + Arrays.toString(k));
      }
    }
  }

  /** Up to six levels, some empty; L0 files overlap, deeper levels hold disjoint sorted ranges. */
  private static Tree randomTree(SplittableRandom random) {
    List<List<FileMeta>> levels = new ArrayList<>();
    int levelCount = 1 + random.nextInt(6);
    long number = 1;
    for (int level = 0; level < levelCount; level++) {
      List<FileMeta> files = new ArrayList<>();
      if (random.nextInt(3) > 0) {
        int n = random.nextInt(level == 0 ? 4 : 9);
        if (level == 0) {
          for (int i = 0; i < n; i++) {
            int lo = random.nextInt(1000);
            files.add(file(number++, lo, lo + random.nextInt(200)));
          }
        } else {
          int at = random.nextInt(100);
          for (int i = 0; i < n; i++) {
            int lo = at + random.nextInt(50);
            int hi = lo + random.nextInt(100);
            files.add(file(number++, lo, hi));
            at = hi + 1;
          }
        }
      }
      levels.add(files);
    }
    return new Tree(levels);
  }

  private static FileMeta file(long number, int smallest, int largest) {
    TableProperties p =
        new TableProperties(
            1,
            key(smallest),
            key(largest),
            0,
            Long.MAX_VALUE,
            Long.MAX_VALUE,
            Collections.emptyMap());
    return new FileMeta(number, 0, 1, p, null);
  }

  private static byte[] key(int k) {
    byte[] out = new byte[4];
    Bytes.putInt(out, 0, k);
    return out;
  }
}
