package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.cache.BlockCache;
import io.cobble.iterator.KvIterator;
import io.cobble.util.Bytes;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RestartHints}: the range a hint gives for a target holds the first entry at or after it,
 * starting at the hinted restart just below the target and ending at the one just above it (by the
 * four key bytes a hint keeps), against entry offsets parsed from the raw block here; and tables
 * record hints for the blocks they read through the block cache and for the blocks they keep.
 */
class RestartHintsTest {
  @TempDir Path dir;

  @Test
  void aHintedRangeStartsBelowTheTargetsEntryAndEndsAtTheNextHintedRestartAbove() {
    long seed = Long.getLong("cobble.restart-hints.seed", System.nanoTime());
    System.out.println("RestartHintsTest seed " + seed + " (-Dcobble.restart-hints.seed)");
    SplittableRandom rnd = new SplittableRandom(seed);
    int sampled = 0;
    for (int round = 0; round < 300; round++) {
      String context = "seed " + seed + " round " + round;
      byte[] prefix = new byte[rnd.nextInt(12)];
      rnd.nextBytes(prefix);
      TreeSet<byte[]> keys = new TreeSet<>(Bytes::compare);
      int n = 1 + rnd.nextInt(250);
      while (keys.size() < n) {
        keys.add(withTail(prefix, rnd));
      }
      int interval = 1 + rnd.nextInt(16);
      BlockBuilder builder = new BlockBuilder(interval);
      for (byte[] k : keys) {
        builder.add(k, new byte[rnd.nextInt(40)]);
      }
      byte[] raw = builder.finish();
      byte[] kept = BlockIterator.kept(raw);
      BlockIterator it = new BlockIterator().resetKept(kept);
      int block = rnd.nextInt(3);
      RestartHints hints = new RestartHints(3);
      hints.fill(block, it);
      assertEquals(1, hints.hintedBlocks(), context);

      // Where each entry starts in the kept array: the raw block is its tail.
      int[] starts = entryStarts(raw, kept.length - raw.length);
      List<byte[]> sorted = new ArrayList<>(keys);
      int restarts = (n + interval - 1) / interval;
      int hinted = Math.min(RestartHints.PER_BLOCK, restarts);
      sampled += restarts > hinted ? 1 : 0;
      int[] hintedEntries = new int[hinted];
      for (int j = 0; j < hinted; j++) {
        hintedEntries[j] = (int) ((long) j * restarts / hinted) * interval;
      }
      int common = it.keptCommonLength();
      for (int s = 0; s < 30; s++) {
        byte[] target = s % 3 == 0 ? sorted.get(rnd.nextInt(n)) : withTail(prefix, rnd);
        if (target.length < common || !Arrays.equals(target, 0, common, sorted.get(0), 0, common)) {
          continue;
        }
        int entry = 0;
        while (entry < n && Bytes.compare(sorted.get(entry), target) < 0) {
          entry++;
        }
        // Hints keep four key bytes after the common prefix: restarts are placed by those alone,
        // so a restart whose four bytes tie with the target's bounds the range on both sides.
        int t = word(target, common);
        int below = 0;
        while (below + 1 < hinted
            && Integer.compareUnsigned(word(sorted.get(hintedEntries[below + 1]), common), t) < 0) {
          below++;
        }
        int above = below + 1;
        while (above < hinted
            && Integer.compareUnsigned(word(sorted.get(hintedEntries[above]), common), t) <= 0) {
          above++;
        }
        long range = hints.range(block, target);
        int from = (int) (range >>> 32);
        int to = (int) range;
        String at = context + " target " + Arrays.toString(target);
        assertEquals(starts[hintedEntries[below]], from, at);
        assertEquals(above < hinted ? starts[hintedEntries[above]] : starts[n], to, at);
        assertTrue(from <= starts[entry] && starts[entry] <= to, at);
      }
      assertEquals(-1, hints.range((block + 1) % 3, sorted.get(0)), "a block without hints");
      // An array that is not the block (a recycled one) is only read within its bounds.
      hints.touch(block, new byte[7], sorted.get(0), RestartHints.SCAN_TAIL);
    }
    assertTrue(sampled > 50, "blocks with more restarts than hinted: " + sampled);
  }

  /** The four key bytes after {@code common}, big-endian, zero past the key's end. */
  private static int word(byte[] key, int common) {
    int w = 0;
    for (int i = 0; i < 4; i++) {
      w = w << 8 | (common + i < key.length ? key[common + i] & 0xFF : 0);
    }
    return w;
  }

  @Test
  void aBlockThatIsNotKeptGetsNoHints() {
    BlockBuilder builder = new BlockBuilder(4);
    for (int i = 0; i < 40; i++) {
      builder.add(String.format("k%04d", i).getBytes(StandardCharsets.UTF_8), new byte[3]);
    }
    byte[] raw = builder.finish();
    RestartHints hints = new RestartHints(1);
    hints.fill(0, new BlockIterator().reset(raw, raw.length));
    assertEquals(0, hints.hintedBlocks());
  }

  @Test
  void tablesHintTheBlocksTheyReadThroughTheCacheAndTheBlocksTheyKeep() throws Exception {
    Path path = dir.resolve("000001.sst");
    TableBuilder b =
        new TableBuilder(
            path,
            TableOptions.builder()
                .blockSize(1024)
                .restartInterval(8)
                .partitionedIndex(true)
                .build());
    int n = 5_000;
    for (int i = 0; i < n; i++) {
      b.add(key(i), key(i));
    }
    b.finish(1, Long.MAX_VALUE, Long.MAX_VALUE, Collections.emptyMap());
    for (boolean resident : new boolean[] {false, true}) {
      try (Table t =
          Table.open(
              path,
              1,
              new BlockCache(64 << 20),
              TableReadOptions.builder()
                  .pinTopIndex(true)
                  .pinPartitions(true)
                  .residentBlocks(resident)
                  .build())) {
        assertEquals(0, t.hintedBlocks());
        for (int i = 0; i < n; i += 97) {
          assertArrayEquals(key(i), t.get(key(i), BloomFilter.hash(key(i))), "key " + i);
        }
        int afterGets = t.hintedBlocks();
        assertTrue(afterGets > 30, resident + ": " + afterGets + " blocks hinted by gets");
        if (!resident) {
          KvIterator it = t.iterator(0);
          for (int i = 50; i < n; i += 97) {
            it.seek(key(i));
            assertArrayEquals(key(i), it.key(), "seek " + i);
          }
          it.close();
          assertTrue(t.hintedBlocks() > afterGets, "seeks hint the blocks they read");
        }
      }
    }
  }

  private static byte[] key(int i) {
    return String.format("table/key/%08d", i).getBytes(StandardCharsets.UTF_8);
  }

  /** The prefix, then 1 to 12 random bytes. */
  private static byte[] withTail(byte[] prefix, SplittableRandom rnd) {
    byte[] k = Arrays.copyOf(prefix, prefix.length + 1 + rnd.nextInt(12));
    for (int i = prefix.length; i < k.length; i++) {
      k[i] = (byte) rnd.nextInt(256);
    }
    return k;
  }

  /**
   * Each entry's start in a block stored as {@link BlockBuilder} writes it (three varint lengths,
   * the key's unshared bytes, the value; a restart array and its count after the entries), shifted
   * by {@code base}; the last element is where the entries end.
   */
  private static int[] entryStarts(byte[] raw, int base) {
    int restarts = Bytes.getInt(raw, raw.length - 4);
    int end = raw.length - 4 - 4 * restarts;
    List<Integer> starts = new ArrayList<>();
    int[] p = {0};
    while (p[0] < end) {
      starts.add(base + p[0]);
      varint(raw, p);
      int unshared = varint(raw, p);
      int value = varint(raw, p);
      p[0] += unshared + value;
    }
    starts.add(base + end);
    return starts.stream().mapToInt(Integer::intValue).toArray();
  }

  private static int varint(byte[] b, int[] p) {
    int v = 0;
    for (int shift = 0; ; shift += 7) {
      int x = b[p[0]++] & 0xFF;
      v |= (x & 0x7F) << shift;
      if (x < 0x80) {
        return v;
      }
    }
  }
}
