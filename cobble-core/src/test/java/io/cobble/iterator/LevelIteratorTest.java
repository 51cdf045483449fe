package io.cobble.iterator;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link LevelIterator} over in-memory run files: seeks land in the right file (including exactly
 * on a file's last key and in the gap between two files), {@code next} crosses file boundaries and
 * skips empty files, an empty level is never valid, and at most one file is open at a time.
 */
class LevelIteratorTest {

  /** Every file iterator closed so far (by identity). */
  private static final Set<KvIterator> CLOSED = Collections.newSetFromMap(new IdentityHashMap<>());

  /** A run file over a sorted list that counts how often it is opened and how many are open. */
  private static final class ListFile implements RunFile {
    private final List<byte[][]> entries = new ArrayList<>();
    private final byte[] largest;
    private final int[] open;
    int opened;

    ListFile(int[] open, byte[] largest, String... keys) {
      this.open = open;
      this.largest = largest;
      for (String k : keys) {
        entries.add(new byte[][] {b(k), b("v" + k)});
      }
    }

    ListFile(int[] open, String... keys) {
      this(open, b(keys[keys.length - 1]), keys);
    }

    @Override
    public byte[] largest() {
      return largest;
    }

    @Override
    public KvIterator iterator(int readAhead, KvIterator reuse) {
      // The contract closes a reused iterator either way; one already closed is not closed again.
      if (reuse != null && !CLOSED.contains(reuse)) {
        reuse.close();
      }
      return iterator(readAhead);
    }

    @Override
    public KvIterator iterator(int readAhead) {
      opened++;
      open[0]++;
      SortedListIterator list = new SortedListIterator();
      for (byte[][] e : entries) {
        list.add(e[0], e[1]);
      }
      return new KvIterator() {
        @Override
        public void seekToFirst() {
          list.seekToFirst();
        }

        @Override
        public void seek(byte[] target) {
          list.seek(target);
        }

        @Override
        public boolean valid() {
          return list.valid();
        }

        @Override
        public void next() {
          list.next();
        }

        @Override
        public byte[] key() {
          return list.key();
        }

        @Override
        public byte[] value() {
          return list.value();
        }

        @Override
        public void close() {
          assertFalse(list.closed, "a file iterator is closed once");
          list.close();
          CLOSED.add(this);
          open[0]--;
        }
      };
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static String s(byte[] b) {
    return new String(b, UTF_8);
  }

  private static List<String> drain(KvIterator it, int[] open) {
    List<String> out = new ArrayList<>();
    while (it.valid()) {
      assertEquals(1, open[0], "exactly one file open while positioned");
      assertEquals("v" + s(it.key()), s(it.value()));
      out.add(s(it.key()));
      it.next();
    }
    return out;
  }

  @Test
  void emptyLevelIsNeverValid() {
    LevelIterator it = new LevelIterator(List.of(), 0);
    assertFalse(it.valid());
    it.seekToFirst();
    assertFalse(it.valid());
    it.seek(b("a"));
    assertFalse(it.valid());
    it.close();
  }

  @Test
  void nextCrossesFilesInOrderOpeningOneAtATime() {
    int[] open = {0};
    ListFile f1 = new ListFile(open, "a", "b", "c");
    ListFile f2 = new ListFile(open, "e");
    ListFile f3 = new ListFile(open, "g", "h");
    LevelIterator it = new LevelIterator(List.of(f1, f2, f3), 0);
    assertEquals(0, f1.opened + f2.opened + f3.opened, "nothing opens before a seek");
    it.seekToFirst();
    assertEquals(List.of("a", "b", "c", "e", "g", "h"), drain(it, open));
    assertEquals(0, open[0], "the last file is closed once the level is exhausted");
    assertEquals(1, f1.opened);
    assertEquals(1, f2.opened);
    assertEquals(1, f3.opened);
    it.close();
    assertEquals(0, open[0]);
  }

  @Test
  void seekLandsInTheFileWhoseRangeHoldsTheTarget() {
    int[] open = {0};
    ListFile f1 = new ListFile(open, "b", "d");
    ListFile f2 = new ListFile(open, "f", "h");
    ListFile f3 = new ListFile(open, "j", "l");
    LevelIterator it = new LevelIterator(List.of(f1, f2, f3), 0);

    it.seek(b("a")); // before the level
    assertEquals("b", s(it.key()));
    it.seek(b("d")); // exactly a file's largest key: stays in that file
    assertEquals("d", s(it.key()));
    it.next();
    assertEquals("f", s(it.key()));
    it.seek(b("e")); // in the gap between two files
    assertEquals("f", s(it.key()));
    it.seek(b("g")); // inside a file, between two of its keys
    assertEquals("h", s(it.key()));
    it.seek(b("l")); // the level's largest key
    assertEquals("l", s(it.key()));
    it.next();
    assertFalse(it.valid());
    it.seek(b("m")); // past the level
    assertFalse(it.valid());
    assertEquals(0, open[0], "a seek past the level opens nothing");
    it.seek(b("c")); // backwards again after running off the end
    assertEquals(List.of("d", "f", "h", "j", "l"), drain(it, open));
    it.close();
    assertEquals(0, open[0]);
  }

  @Test
  void seekUsesLargestKeysOnlyAndNeverOpensEarlierFiles() {
    int[] open = {0};
    ListFile f1 = new ListFile(open, "a", "b");
    ListFile f2 = new ListFile(open, "c", "d");
    ListFile f3 = new ListFile(open, "e", "f");
    LevelIterator it = new LevelIterator(List.of(f1, f2, f3), 0);
    it.seek(b("e"));
    assertEquals("e", s(it.key()));
    assertEquals(0, f1.opened, "a seek opens only the file it lands in");
    assertEquals(0, f2.opened, "a seek opens only the file it lands in");
    assertEquals(1, f3.opened);
    it.close();
  }

  @Test
  void filesWithoutEntriesAtOrAfterTheTargetAreSkipped() {
    int[] open = {0};
    // A file may claim a larger largest key than it holds (e.g. a table whose last rows were
    // dropped by a range filter): a seek landing there moves on to the next file.
    ListFile f1 = new ListFile(open, b("c"), "a");
    ListFile empty = new ListFile(open, b("d"));
    ListFile f3 = new ListFile(open, "e", "f");
    LevelIterator it = new LevelIterator(List.of(f1, empty, f3), 0);
    it.seek(b("b"));
    assertTrue(it.valid());
    assertEquals("e", s(it.key()));
    it.seekToFirst();
    assertEquals(List.of("a", "e", "f"), drain(it, open));
    it.close();
    assertEquals(0, open[0]);
  }

  /** Random levels and seeks against a sorted map; replay with -Dcobble.test.seed=N. */
  @Test
  void agreesWithASortedMapOnRandomLevels() {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    System.out.println(
        "LevelIteratorTest seed " + seed + " (replay: -Dcobble.test.seed=" + seed + ")");
    Random random = new Random(seed);
    for (int round = 0; round < 200; round++) {
      int[] open = {0};
      TreeMap<String, String> model = new TreeMap<>();
      List<RunFile> files = new ArrayList<>();
      int next = 0;
      int fileCount = random.nextInt(6);
      for (int f = 0; f < fileCount; f++) {
        int n = 1 + random.nextInt(5);
        String[] keys = new String[n];
        for (int i = 0; i < n; i++) {
          next += 1 + random.nextInt(3);
          keys[i] = String.format("k%04d", next);
          model.put(keys[i], "v" + keys[i]);
        }
        files.add(new ListFile(open, keys));
      }
      LevelIterator it = new LevelIterator(files, 0);
      it.seekToFirst();
      assertEquals(new ArrayList<>(model.keySet()), drain(it, open), "seed " + seed);
      for (int q = 0; q < 20; q++) {
        String target = String.format("k%04d", random.nextInt(next + 3));
        it.seek(b(target));
        Map.Entry<String, String> want = model.ceilingEntry(target);
        if (want == null) {
          assertFalse(it.valid(), "seed " + seed + " seek " + target);
        } else {
          assertTrue(it.valid(), "seed " + seed + " seek " + target);
          assertEquals(want.getKey(), s(it.key()), "seed " + seed + " seek " + target);
          it.next();
          Map.Entry<String, String> after = model.higherEntry(want.getKey());
          assertEquals(after == null, !it.valid(), "seed " + seed + " next after " + target);
          if (after != null) {
            assertArrayEquals(b(after.getKey()), it.key(), "seed " + seed);
          }
        }
        assertTrue(open[0] <= 1, "at most one file open");
      }
      it.close();
      assertEquals(0, open[0], "closing the level closes its open file");
    }
  }
}
