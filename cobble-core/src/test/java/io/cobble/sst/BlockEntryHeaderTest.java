package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.util.Bytes;
import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Block entries whose header lengths (shared, unshared, value) take one varint byte each, which
 * {@link BlockIterator} reads with one load, and those that take more, which it reads through its
 * reader: iteration and seeks against a sorted map, in the plain and the kept form, and entries
 * that claim more bytes than the block holds are rejected either way.
 */
class BlockEntryHeaderTest {
  @Test
  void entriesOfEveryHeaderWidthReadBackAndSeek() {
    long seed = Long.getLong("cobble.block-header.seed", System.nanoTime());
    System.out.println("BlockEntryHeaderTest seed " + seed + " (-Dcobble.block-header.seed)");
    SplittableRandom rnd = new SplittableRandom(seed);
    int wide = 0;
    for (int round = 0; round < 200; round++) {
      TreeMap<byte[], byte[]> model = new TreeMap<>(Bytes::compare);
      int n = 1 + rnd.nextInt(60);
      while (model.size() < n) {
        // Long shared runs, and key and value lengths on both sides of 128.
        byte[] k = new byte[1 + rnd.nextInt(rnd.nextBoolean() ? 20 : 300)];
        for (int i = 0; i < k.length; i++) {
          k[i] = (byte) (i < k.length - 2 ? 'a' : 'a' + rnd.nextInt(3));
        }
        byte[] v = new byte[rnd.nextBoolean() ? rnd.nextInt(128) : rnd.nextInt(400)];
        rnd.nextBytes(v);
        model.put(k, v);
        wide += k.length >= 128 || v.length >= 128 ? 1 : 0;
      }
      BlockBuilder builder = new BlockBuilder(1 + rnd.nextInt(16));
      for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
        builder.add(e.getKey(), e.getValue());
      }
      byte[] raw = builder.finish();
      String context = "seed " + seed + " round " + round;
      for (BlockIterator it :
          new BlockIterator[] {
            new BlockIterator().reset(raw, raw.length),
            new BlockIterator().resetKept(BlockIterator.kept(raw))
          }) {
        it.seekToFirst();
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
          assertTrue(it.valid(), context);
          assertArrayEquals(e.getKey(), it.key(), context);
          assertArrayEquals(e.getValue(), it.value(), context);
          it.next();
        }
        assertFalse(it.valid(), context);
        for (int s = 0; s < 40; s++) {
          byte[] target = Arrays.copyOf(model.firstKey(), 1 + rnd.nextInt(310));
          for (int i = 0; i < target.length; i++) {
            target[i] = (byte) ('a' + rnd.nextInt(3));
          }
          it.seek(target);
          Map.Entry<byte[], byte[]> expected = model.ceilingEntry(target);
          assertEquals(expected != null, it.valid(), context);
          if (expected != null) {
            assertArrayEquals(expected.getKey(), it.key(), context);
            assertArrayEquals(expected.getValue(), it.value(), context);
          }
        }
      }
    }
    assertTrue(wide > 1_000, "entries with wider headers: " + wide);
  }

  @Test
  void anEntryPastTheEntriesIsRejectedWhateverItsHeaderWidth() {
    // One byte each: shared 0, unshared 3, value 2; then the value length claims 100 bytes.
    byte[] narrow = block(new byte[3], new byte[2]);
    assertEquals(3, narrow[1]);
    narrow[2] = 100;
    assertRejected(narrow);
    // A 200-byte key takes a two-byte varint, so the header is read through the reader.
    byte[] wide = block(new byte[200], new byte[2]);
    assertEquals(2, wide[3]);
    wide[3] = 100;
    assertRejected(wide);
  }

  private static byte[] block(byte[] key, byte[] value) {
    BlockBuilder builder = new BlockBuilder(16);
    builder.add(key, value);
    return builder.finish();
  }

  private static void assertRejected(byte[] raw) {
    assertThrows(
        IllegalStateException.class,
        () -> new BlockIterator().reset(raw, raw.length).seekToFirst());
    assertThrows(
        IllegalStateException.class,
        () -> new BlockIterator().reset(raw, raw.length).seek(new byte[] {1}));
  }
}
