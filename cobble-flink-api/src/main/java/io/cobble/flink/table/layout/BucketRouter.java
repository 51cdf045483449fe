package io.cobble.flink.table.layout;

/**
 * Maps an encoded primary key to its bucket: {@code murmur3_32(key, seed 0)} read as an unsigned
 * 32-bit number, modulo the bucket count. The hash is the x86 32-bit MurmurHash3 over the key bytes
 * exactly as {@link io.cobble.flink.table.codec.KeyEncoder} writes them, so the bucket of a row
 * depends only on its key values and never on a JVM, a Flink version or Java's {@code hashCode}.
 * Sink, source and lookup must agree on it forever: changing it reshuffles every table.
 */
public final class BucketRouter {

  private static final int C1 = 0xcc9e2d51;
  private static final int C2 = 0x1b873593;

  private BucketRouter() {}

  /** The bucket in {@code [0, bucketCount)} of an encoded key. */
  public static int bucketOf(byte[] encodedKey, int bucketCount) {
    return bucketOf(encodedKey, encodedKey.length, bucketCount);
  }

  /** The bucket of the encoded key in {@code encodedKey[0..length)}. */
  public static int bucketOf(byte[] encodedKey, int length, int bucketCount) {
    return (int) (Integer.toUnsignedLong(murmur3(encodedKey, length)) % bucketCount);
  }

  /** MurmurHash3 x86_32 with seed 0. */
  static int murmur3(byte[] data) {
    return murmur3(data, data.length);
  }

  private static int murmur3(byte[] data, int length) {
    int h = 0;
    int blocks = length / 4;
    for (int i = 0; i < blocks; i++) {
      int at = i * 4;
      int k =
          (data[at] & 0xff)
              | (data[at + 1] & 0xff) << 8
              | (data[at + 2] & 0xff) << 16
              | (data[at + 3] & 0xff) << 24;
      h ^= mixK(k);
      h = Integer.rotateLeft(h, 13) * 5 + 0xe6546b64;
    }
    int tail = blocks * 4;
    int k = 0;
    switch (length & 3) {
      case 3:
        k ^= (data[tail + 2] & 0xff) << 16;
        // fall through
      case 2:
        k ^= (data[tail + 1] & 0xff) << 8;
        // fall through
      case 1:
        k ^= data[tail] & 0xff;
        h ^= mixK(k);
        break;
      default:
        break;
    }
    h ^= length;
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    h ^= h >>> 16;
    return h;
  }

  private static int mixK(int k) {
    k *= C1;
    k = Integer.rotateLeft(k, 15);
    return k * C2;
  }
}
