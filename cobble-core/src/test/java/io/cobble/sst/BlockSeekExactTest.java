package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.cobble.cache.BlockCache;
import io.cobble.util.Bytes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link BlockIterator#seekExact}, which skips keys by their shared-prefix length instead of
 * comparing them, against a sorted map. Keys come from a small alphabet with long shared runs, so
 * keys that are prefixes of others, equal-length neighbours and every shared length occur. Half the
 * blocks carry a {@link DataBlockHash} index (up to 400 keys, so some have too many restarts for
 * one and fall back to the plain layout). Replay a failure with {@code
 * -Dcobble.block-seek.seed=<seed>}.
 */
class BlockSeekExactTest {
  @Test
  void findsExactlyTheStoredKeys() {
    long seed = Long.getLong("cobble.block-seek.seed", System.nanoTime());
    System.out.println("BlockSeekExactTest seed " + seed + " (-Dcobble.block-seek.seed)");
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int round = 0; round < 300; round++) {
      TreeMap<byte[], byte[]> model = new TreeMap<>(Bytes::compare);
      int n = 1 + rnd.nextInt(400);
      while (model.size() < n) {
        byte[] k = randomKey(rnd);
        byte[] v = new byte[rnd.nextInt(12)];
        rnd.nextBytes(v);
        model.put(k, v);
      }
      int restartInterval = 1 + rnd.nextInt(20);
      boolean hashIndex = rnd.nextBoolean();
      BlockBuilder builder = new BlockBuilder(restartInterval, hashIndex);
      for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
        builder.add(e.getKey(), e.getValue());
      }
      byte[] raw = builder.finish();
      // The same block as a table reads it, and in the form a table keeps it (restart words).
      BlockIterator plain = new BlockIterator().reset(raw, raw.length);
      BlockIterator kept = new BlockIterator().resetKept(BlockIterator.kept(raw));
      // The kept form as the block cache holds it: written from a decode buffer longer than the
      // block into a recycled array longer than the form, both holding leftovers.
      byte[] decodeBuffer = Arrays.copyOf(raw, raw.length + rnd.nextInt(64));
      BlockIterator writer = new BlockIterator();
      int keptLength = writer.prepareKept(decodeBuffer, raw.length);
      byte[] recycledArray = new byte[keptLength + rnd.nextInt(64)];
      rnd.nextBytes(recycledArray);
      writer.writeKept(recycledArray);
      BlockIterator cached = new BlockIterator().resetKept(recycledArray, keptLength);
      String context =
          "seed " + seed + " round " + round + " restart " + restartInterval + " hash " + hashIndex;
      List<byte[]> probes = new ArrayList<>(model.keySet());
      for (byte[] k : model.keySet()) {
        // Neighbours of every stored key: its prefixes, extensions and one-byte changes.
        probes.add(Arrays.copyOf(k, k.length + 1));
        if (k.length > 0) {
          probes.add(Arrays.copyOf(k, rnd.nextInt(k.length)));
          byte[] changed = k.clone();
          int i = rnd.nextInt(k.length);
          changed[i] = (byte) (changed[i] + (rnd.nextBoolean() ? 1 : -1));
          probes.add(changed);
        }
      }
      for (int i = 0; i < 200; i++) {
        probes.add(randomKey(rnd));
      }
      for (byte[] probe : probes) {
        byte[] expected = model.get(probe);
        for (BlockIterator it : new BlockIterator[] {plain, kept, cached}) {
          String form = it == kept ? " kept" : it == cached ? " cached" : "";
          String where = context + form + " key " + Arrays.toString(probe);
          boolean found = it.seekExact(probe, BloomFilter.hash(probe));
          assertEquals(expected != null, found, where);
          if (found) {
            byte[] actual =
                Arrays.copyOfRange(
                    it.valueArray(), it.valueOffset(), it.valueOffset() + it.valueLength());
            assertArrayEquals(expected, actual, where);
          }
        }
        // Every form's cursor seeks (a kept block's by the words too), and walks on from there.
        byte[] ceiling = model.ceilingKey(probe);
        for (BlockIterator it : new BlockIterator[] {plain, kept, cached}) {
          String where = context + " seek " + Arrays.toString(probe);
          it.seek(probe);
          assertEquals(ceiling != null, it.valid(), where);
          if (ceiling != null) {
            assertArrayEquals(ceiling, it.key(), where);
            it.next();
            byte[] after = model.higherKey(ceiling);
            assertEquals(after != null, it.valid(), where + " next");
            if (after != null) {
              assertArrayEquals(after, it.key(), where + " next");
            }
          }
        }
      }
    }
  }

  @Test
  void aDamagedKeptFormIsRejected() {
    BlockBuilder builder = new BlockBuilder(4, false);
    for (int i = 0; i < 40; i++) {
      builder.add(String.format("key-%03d", i).getBytes(), new byte[] {(byte) i});
    }
    byte[] kept = BlockIterator.kept(builder.finish());
    byte[] truncated = Arrays.copyOf(kept, kept.length - 1);
    assertThrows(IllegalStateException.class, () -> new BlockIterator().resetKept(truncated));
    // A length other than the form's, within a longer array, and past the array's end.
    byte[] longer = Arrays.copyOf(kept, kept.length + 8);
    assertThrows(IllegalStateException.class, () -> new BlockIterator().resetKept(longer));
    assertThrows(
        IllegalStateException.class, () -> new BlockIterator().resetKept(longer, kept.length - 1));
    assertThrows(
        IllegalStateException.class, () -> new BlockIterator().resetKept(kept, kept.length + 1));
    // Each header field out of step with the array: restart count, common prefix length, entries'
    // end and hash bucket count (after the bytes the block cache keeps for itself).
    int at = BlockCache.RESERVED_BYTES;
    for (int field : new int[] {at, at + 4, at + 8, at + 12}) {
      for (int delta : new int[] {1, -1, 1 << 20}) {
        byte[] bad = kept.clone();
        Bytes.putInt(bad, field, Bytes.getInt(bad, field) + delta);
        assertThrows(
            IllegalStateException.class,
            () -> new BlockIterator().resetKept(bad),
            "field " + field + " changed by " + delta);
      }
    }
    assertThrows(IllegalStateException.class, () -> new BlockIterator().resetKept(new byte[12]));
  }

  /** Keys over bytes {0, 1, 0x7F, 0x80, 0xFF}, mostly sharing a long run, 0-40 bytes long. */
  private static byte[] randomKey(SplittableRandom rnd) {
    byte[] alphabet = {0, 1, 0x7F, (byte) 0x80, (byte) 0xFF};
    byte[] k = new byte[rnd.nextInt(41)];
    int run = rnd.nextInt(k.length + 1);
    for (int i = 0; i < k.length; i++) {
      k[i] = i < run ? (byte) 'a' : alphabet[rnd.nextInt(alphabet.length)];
    }
    return k;
  }
}
