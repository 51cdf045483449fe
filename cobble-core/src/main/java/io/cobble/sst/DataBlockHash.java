package io.cobble.sst;

import io.cobble.util.ByteWriter;
import io.cobble.util.Bytes;
import java.util.Arrays;

/**
 * The hash index at the end of a data block (RocksDB's binary-and-hash data block index): one byte
 * per bucket holding the restart ordinal of the group that holds every key hashing there, {@link
 * #EMPTY} when no key does and {@link #COLLISION} when keys of two groups do. A point get reads one
 * bucket and scans one restart group instead of binary-searching the restarts (each step a cache
 * line of its own); a collision falls back to the binary search, and an empty bucket answers "not
 * in this block" without touching an entry.
 *
 * <p>Layout after the restart offsets: the buckets, the bucket count (uint16), then the restart
 * count (int32) with {@link #FLAG} set. Hashes are {@link BloomFilter#hash} of the key; the index
 * uses bits 16-47 of it, scaled onto the buckets. A block with more than {@link #MAX_RESTARTS}
 * restarts has no hash index.
 */
final class DataBlockHash {
  /** Bit of the trailing restart count that marks a block carrying a hash index. */
  static final int FLAG = 0x8000_0000;

  static final int EMPTY = 0xFF;
  static final int COLLISION = 0xFE;

  /** Restart ordinals a bucket can name (0..253). */
  static final int MAX_RESTARTS = COLLISION;

  private DataBlockHash() {}

  /**
   * Buckets for {@code entries} keys: two per key (RocksDB's default is 4 per 3 keys), so about 60
   * % of keys rather than half have a bucket to their own group, for about 2 % of a 4 KiB block.
   */
  static int bucketCount(int entries) {
    return Math.min(0xFFFF, 2 * entries + 1);
  }

  /** The bucket of a key hash. */
  static int bucket(long hash, int buckets) {
    return (int) ((((hash >>> 16) & 0xFFFFFFFFL) * buckets) >>> 32);
  }

  /**
   * Writes the buckets and their count for {@code entries} keys whose hashes are {@code hashes}, in
   * block order, grouped {@code restartInterval} to a restart; {@code map} is a scratch array of at
   * least {@link #bucketCount} bytes.
   */
  static void write(ByteWriter out, long[] hashes, int entries, int restartInterval, byte[] map) {
    int buckets = bucketCount(entries);
    Arrays.fill(map, 0, buckets, (byte) EMPTY);
    for (int i = 0; i < entries; i++) {
      int b = bucket(hashes[i], buckets);
      int group = i / restartInterval;
      int current = map[b] & 0xFF;
      if (current == EMPTY) {
        map[b] = (byte) group;
      } else if (current != group) {
        map[b] = (byte) COLLISION;
      }
    }
    out.writeBytes(map, 0, buckets);
    out.writeByte(buckets >>> 8);
    out.writeByte(buckets);
  }

  /**
   * The bucket count of a block whose trailer is {@code trailer} (the last int32 of its first
   * {@code length} bytes), 0 when it has no hash index; IllegalStateException if out of range.
   */
  static int bucketsOf(byte[] data, int length, int trailer) {
    if ((trailer & FLAG) == 0) {
      return 0;
    }
    if (length < 6) {
      throw new IllegalStateException("block too short for a hash index: " + length + " bytes");
    }
    int buckets = Bytes.getShort(data, length - 6);
    if (buckets < 1 || length - 6 - buckets < 0) {
      throw new IllegalStateException("bad hash index bucket count " + buckets);
    }
    return buckets;
  }
}
