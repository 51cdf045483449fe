package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cobble.cache.BlockCache;
import io.cobble.util.Bytes;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link BloomFilter#hash} is part of the file format: filters written by earlier builds must keep
 * answering. The hash reads words eight bytes at a time now; these tests pin it to the definition
 * it was written with (words assembled byte by byte, kept here as the reference).
 */
class BloomHashCompatibilityTest {
  @TempDir Path dir;

  /** The hash as first written, assembling each word byte by byte. */
  private static long referenceHash(byte[] key, int off, int len) {
    long h = 0xcbf29ce484222325L ^ len;
    int i = off;
    int end = off + len;
    for (; i + 8 <= end; i += 8) {
      long k =
          ((long) (key[i] & 0xFF) << 56)
              | ((long) (key[i + 1] & 0xFF) << 48)
              | ((long) (key[i + 2] & 0xFF) << 40)
              | ((long) (key[i + 3] & 0xFF) << 32)
              | ((long) (key[i + 4] & 0xFF) << 24)
              | ((key[i + 5] & 0xFF) << 16)
              | ((key[i + 6] & 0xFF) << 8)
              | (key[i + 7] & 0xFF);
      h = (h ^ referenceMix(k)) * 0x9E3779B97F4A7C15L;
    }
    for (; i < end; i++) {
      h = (h ^ (key[i] & 0xFF)) * 0x100000001B3L;
    }
    return referenceMix(h);
  }

  private static long referenceMix(long z) {
    z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
    z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
    return z ^ (z >>> 33);
  }

  @Test
  void equalsTheByteWiseDefinitionOnEveryLengthAndOffset() {
    long seed = Long.getLong("cobble.bloom-hash.seed", System.nanoTime());
    Random r = new Random(seed);
    byte[] buf = new byte[64 + 16];
    for (int round = 0; round < 2_000; round++) {
      // Every third round only bytes with the top bit set, where a sign-extending load would
      // differ.
      r.nextBytes(buf);
      if (round % 3 == 0) {
        for (int i = 0; i < buf.length; i++) {
          buf[i] |= (byte) 0x80;
        }
      }
      for (int len = 0; len <= 64; len++) {
        int off = r.nextInt(buf.length - len + 1);
        assertEquals(
            referenceHash(buf, off, len),
            BloomFilter.hash(buf, off, len),
            "seed " + seed + " round " + round + " length " + len + " offset " + off);
        byte[] key = Arrays.copyOfRange(buf, off, off + len);
        assertEquals(referenceHash(key, 0, len), BloomFilter.hash(key));
      }
    }
  }

  /**
   * A table written by the build before the word-wise hash (seeded keys of 1..64 random bytes, 16
   * per length, value = key plus one zero byte, 10 bloom bits per key): every key is found through
   * its filter. With another hash nearly every probe would be refused by the filter.
   */
  @Test
  void tablesWrittenWithTheByteWiseHashFindEveryKey() throws Exception {
    Path path = dir.resolve("000001.sst");
    try (InputStream in = getClass().getResourceAsStream("bloom-hash-v1.sst")) {
      Files.copy(in, path);
    }
    Random r = new Random(20261203L);
    TreeSet<byte[]> keys = new TreeSet<>(Bytes::compare);
    for (int len = 1; len <= 64; len++) {
      for (int j = 0; j < 16; j++) {
        byte[] k = new byte[len];
        r.nextBytes(k);
        keys.add(k);
      }
    }
    try (Table t =
        Table.open(path, 1, new BlockCache(1 << 20), TableReadOptions.builder().build())) {
      assertEquals(keys.size(), t.properties().entries());
      for (byte[] k : keys) {
        assertArrayEquals(
            Arrays.copyOf(k, k.length + 1),
            t.get(k, BloomFilter.hash(k)),
            "key of length " + k.length);
      }
    }
  }
}
