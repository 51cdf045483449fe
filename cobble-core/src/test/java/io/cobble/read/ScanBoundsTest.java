package io.cobble.read;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.cobble.util.Bytes;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The bounds a scan reads between hold exactly the tree keys they stand for: for random buckets
 * (the low byte 0xFF and the last bucket among them), random prefixes rich in 0xFF bytes and random
 * tree keys, a key lies in {@code [lo(prefix), hiAfterPrefix(prefix))} exactly when it is a key of
 * the bucket that starts with the prefix, and in {@code [lo(empty), bucketEnd)} exactly when it is
 * a key of the bucket. Judged byte by byte, not by the bounds' own arithmetic.
 */
class ScanBoundsTest {
  private static final int[] EDGE_BUCKETS = {
    0, 1, 0xFE, 0xFF, 0x100, 0x1FF, 0xFEFF, 0xFFFE, 0xFFFF
  };

  @Test
  void prefixBoundsHoldExactlyThePrefixKeys() {
    Random r = new Random(11);
    ScanBounds bounds = new ScanBounds();
    for (int round = 0; round < 20_000; round++) {
      int bucket =
          r.nextBoolean() ? EDGE_BUCKETS[r.nextInt(EDGE_BUCKETS.length)] : r.nextInt(0x10000);
      byte[] buffer = randomBytes(r, r.nextInt(5) + 2);
      int length = r.nextInt(buffer.length + 1);
      byte[] prefix = Arrays.copyOf(buffer, length);
      byte[] lo = bounds.lo(bucket, buffer, length).clone();
      byte[] hi = bounds.hiAfterPrefix(bucket, buffer, length);
      for (int k = 0; k < 20; k++) {
        byte[] key = nearby(r, bucket, prefix);
        boolean inside = Bytes.compare(key, lo) >= 0 && (hi == null || Bytes.compare(key, hi) < 0);
        assertEquals(
            startsWith(key, bucket, prefix),
            inside,
            () ->
                "bucket "
                    + bucket
                    + ", prefix "
                    + Arrays.toString(prefix)
                    + ", key "
                    + Arrays.toString(key));
      }
    }
  }

  @Test
  void bucketBoundsHoldExactlyTheBucketsKeys() {
    Random r = new Random(12);
    ScanBounds bounds = new ScanBounds();
    for (int bucket : EDGE_BUCKETS) {
      byte[] lo = bounds.lo(bucket, Bytes.EMPTY, 0).clone();
      byte[] end = bounds.bucketEnd(bucket);
      assertArrayEquals(
          end, bounds.hi(bucket, null), "a null end is the bucket's end, bucket " + bucket);
      for (int k = 0; k < 2_000; k++) {
        byte[] key = nearby(r, bucket, Bytes.EMPTY);
        boolean inside =
            Bytes.compare(key, lo) >= 0 && (end == null || Bytes.compare(key, end) < 0);
        assertEquals(startsWith(key, bucket, Bytes.EMPTY), inside, "bucket " + bucket);
      }
    }
    assertNull(bounds.bucketEnd(0xFFFF), "nothing follows the last bucket");
  }

  @Test
  void boundsOfOneLengthReuseTheirBuffers() {
    ScanBounds bounds = new ScanBounds();
    byte[] lo = bounds.lo(3, new byte[] {1, 2, 3}, 3);
    byte[] hi = bounds.hiAfterPrefix(3, new byte[] {1, 2, 3}, 3);
    assertSame(lo, bounds.lo(4, new byte[] {7, 8, 9, 10}, 3));
    assertArrayEquals(new byte[] {0, 4, 7, 8, 9}, lo);
    assertSame(hi, bounds.hi(5, new byte[] {6, 6, 6}));
    assertArrayEquals(new byte[] {0, 5, 6, 6, 6}, hi);
    assertNotSame(lo, bounds.lo(4, new byte[] {7, 8}, 2), "another length, another buffer");
  }

  /** Whether {@code key} is a tree key of {@code bucket} whose key starts with {@code prefix}. */
  private static boolean startsWith(byte[] key, int bucket, byte[] prefix) {
    if (key.length < 2 + prefix.length
        || key[0] != (byte) (bucket >>> 8)
        || key[1] != (byte) bucket) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (key[2 + i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * A tree key near the prefix's keys: in the bucket or a neighbour, the prefix cut, kept, bumped
   * or extended, so both sides of every bound are tried.
   */
  private static byte[] nearby(Random r, int bucket, byte[] prefix) {
    int b = Math.max(0, Math.min(0xFFFF, bucket + r.nextInt(3) - 1));
    byte[] body = Arrays.copyOf(prefix, r.nextInt(prefix.length + 1));
    if (body.length > 0 && r.nextInt(4) == 0) {
      body[body.length - 1] += r.nextBoolean() ? 1 : -1;
    }
    byte[] tail = randomBytes(r, r.nextInt(3));
    byte[] key = new byte[2 + body.length + tail.length];
    key[0] = (byte) (b >>> 8);
    key[1] = (byte) b;
    System.arraycopy(body, 0, key, 2, body.length);
    System.arraycopy(tail, 0, key, 2 + body.length, tail.length);
    return key;
  }

  /** Bytes mostly 0xFF or 0x00, the values where a successor carries or ends. */
  private static byte[] randomBytes(Random r, int n) {
    byte[] out = new byte[n];
    for (int i = 0; i < n; i++) {
      int pick = r.nextInt(4);
      out[i] = pick == 0 ? (byte) 0xFF : pick == 1 ? 0 : (byte) r.nextInt(256);
    }
    return out;
  }
}
