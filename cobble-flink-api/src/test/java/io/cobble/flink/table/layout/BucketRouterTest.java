package io.cobble.flink.table.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BucketRouterTest {

  private static int hash(String text) {
    return BucketRouter.murmur3(text.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void isMurmur3X86Of32BitsWithSeedZero() {
    // Reference values of MurmurHash3_x86_32 (seed 0), covering every tail length.
    assertEquals(0, hash(""));
    assertEquals(0x248bfa47, hash("hello"));
    assertEquals(0x149bbb7f, hash("hello, world"));
    assertEquals(0x2e4ff723, hash("The quick brown fox jumps over the lazy dog"));
  }

  @Test
  void bucketsStayInRangeForNegativeHashes() {
    for (int i = 0; i < 10_000; i++) {
      byte[] key = {(byte) i, (byte) (i >> 8), (byte) 0x80};
      int bucket = BucketRouter.bucketOf(key, 7);
      assertTrue(bucket >= 0 && bucket < 7, "bucket " + bucket);
    }
  }

  @Test
  void bucketIsTheUnsignedHashModuloTheCount() {
    byte[] key = "hello".getBytes(StandardCharsets.UTF_8);
    assertEquals((int) (0x248bfa47L % 16), BucketRouter.bucketOf(key, 16));
  }

  /** A key in the front of a longer buffer hashes like the key alone, at every tail length. */
  @Test
  void bucketOfABufferPrefixIgnoresTheRest() {
    byte[] buffer = "hello world, and more".getBytes(StandardCharsets.UTF_8);
    for (int length = 0; length <= 8; length++) {
      byte[] key = java.util.Arrays.copyOf(buffer, length);
      assertEquals(BucketRouter.bucketOf(key, 1021), BucketRouter.bucketOf(buffer, length, 1021));
    }
    assertEquals((int) (0x248bfa47L % 16), BucketRouter.bucketOf(buffer, 5, 16));
  }
}
