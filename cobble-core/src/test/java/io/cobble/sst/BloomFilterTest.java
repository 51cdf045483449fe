package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Filters are a file format: however {@link BloomFilter#build} is written, a filter must be byte
 * for byte the cache-local layout's definition (one block per key from the hash's high word, each
 * probe a bit of it), which readers of every version probe.
 */
class BloomFilterTest {

  @Test
  void buildEqualsTheLayoutsDefinitionAndFindsEveryKey() {
    Random r = new Random(20261205);
    for (int count : new int[] {0, 1, 15, 16, 17, 31, 32, 33, 47, 1000, 100_003}) {
      for (int bitsPerKey : new int[] {1, 10, 16}) {
        long[] hashes = new long[count + 3];
        for (int i = 0; i < hashes.length; i++) {
          hashes[i] = r.nextLong();
        }
        byte[] filter = BloomFilter.build(hashes, count, bitsPerKey);
        assertArrayEquals(definition(hashes, count, bitsPerKey), filter, count + " keys");
        for (int i = 0; i < count; i++) {
          assertTrue(BloomFilter.mayContain(filter, hashes[i]), "key " + i + " of " + count);
        }
      }
    }
  }

  /** The cache-local layout as its format defines it, key by key. */
  private static byte[] definition(long[] hashes, int count, int bitsPerKey) {
    int probes = Math.max(1, Math.min(30, (int) Math.round(bitsPerKey * 0.69)));
    long bits = Math.max(512, (long) count * bitsPerKey);
    int blocks = (int) ((bits + 511) / 512);
    byte[] out = new byte[blocks * 64 + 1];
    for (int i = 0; i < count; i++) {
      int base = (int) (((hashes[i] >>> 32) * blocks) >>> 32) * 64;
      int x = (int) hashes[i];
      for (int p = 0; p < probes; p++) {
        x *= 0x9E3779B9;
        int bit = x >>> 23;
        out[base + (bit >>> 3)] |= (byte) (1 << (bit & 7));
      }
    }
    out[blocks * 64] = (byte) (0x80 | probes);
    return out;
  }
}
