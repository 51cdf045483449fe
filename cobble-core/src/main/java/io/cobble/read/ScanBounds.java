package io.cobble.read;

import io.cobble.util.Bytes;

/**
 * The tree keys that bound a read of one bucket (the bucket's two bytes, then the key), built in
 * buffers reused while their lengths stay the same: a state backend reads one key's rows at a time
 * under prefixes of one length, and would otherwise allocate both bounds on every read. Each bound
 * stays valid until the next call that builds the same bound.
 */
public final class ScanBounds {
  private byte[] lo = Bytes.EMPTY;
  private byte[] hi = Bytes.EMPTY;

  /** The tree key of the first {@code length} bytes of {@code key} in {@code bucket}. */
  public byte[] lo(int bucket, byte[] key, int length) {
    lo = withBucket(lo, 2 + length, bucket);
    System.arraycopy(key, 0, lo, 2, length);
    return lo;
  }

  /** The tree key of {@code end} in {@code bucket}; for a null end, {@link #bucketEnd}. */
  public byte[] hi(int bucket, byte[] end) {
    if (end == null) {
      return bucketEnd(bucket);
    }
    hi = withBucket(hi, 2 + end.length, bucket);
    System.arraycopy(end, 0, hi, 2, end.length);
    return hi;
  }

  /**
   * The first tree key after every key of {@code bucket} that starts with the first {@code length}
   * bytes of {@code prefix}: an all-0xFF prefix ends where the bucket does. Null when nothing
   * follows (an all-0xFF prefix in the last bucket).
   */
  public byte[] hiAfterPrefix(int bucket, byte[] prefix, int length) {
    int n = length;
    while (n > 0 && prefix[n - 1] == (byte) 0xFF) {
      n--;
    }
    if (n == 0) {
      return bucketEnd(bucket);
    }
    hi = withBucket(hi, 2 + n, bucket);
    System.arraycopy(prefix, 0, hi, 2, n);
    hi[1 + n]++;
    return hi;
  }

  /** The first tree key after every key of {@code bucket}; null for the last bucket. */
  public byte[] bucketEnd(int bucket) {
    if ((bucket & 0xFF) != 0xFF) {
      hi = withBucket(hi, 2, bucket + 1);
      return hi;
    }
    if (bucket == 0xFFFF) {
      return null;
    }
    // As Bytes.successor of the two bucket bytes: the low byte is 0xFF, so the high one grows.
    hi = hi.length == 1 ? hi : new byte[1];
    hi[0] = (byte) ((bucket >>> 8) + 1);
    return hi;
  }

  private static byte[] withBucket(byte[] buffer, int length, int bucket) {
    byte[] out = buffer.length == length ? buffer : new byte[length];
    out[0] = (byte) (bucket >>> 8);
    out[1] = (byte) bucket;
    return out;
  }
}
