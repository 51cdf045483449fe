package io.cobble.sst;

import io.cobble.util.ByteWriter;
import io.cobble.util.Bytes;

/**
 * Builds a block of sorted entries with prefix compression: each entry stores the length shared
 * with the previous key, the rest of the key and the value. Every {@code restartInterval} entries a
 * full key is written and its offset recorded, so readers can binary-search restart points. Layout:
 * entries, restart offsets (int32 each), restart count (int32). With a hash index (data blocks,
 * when enabled) the {@link DataBlockHash} buckets sit between the restart offsets and the count.
 */
public final class BlockBuilder {
  private final int restartInterval;
  private final ByteWriter out = new ByteWriter(8192);
  private int[] restarts = new int[64];
  private int restartCount;
  private int counter;
  private byte[] lastKey = new byte[64];
  private int lastKeyLen;
  private int entries;
  private final boolean hashIndex;
  private long[] hashes;
  private byte[] buckets;

  public BlockBuilder(int restartInterval) {
    this(restartInterval, false);
  }

  /** A builder whose blocks carry a {@link DataBlockHash} index when {@code hashIndex}. */
  public BlockBuilder(int restartInterval, boolean hashIndex) {
    this.restartInterval = restartInterval;
    this.hashIndex = hashIndex;
    if (hashIndex) {
      hashes = new long[256];
      buckets = new byte[DataBlockHash.bucketCount(hashes.length)];
    }
    reset();
  }

  public void reset() {
    out.reset();
    restartCount = 0;
    addRestart(0);
    counter = 0;
    lastKeyLen = 0;
    entries = 0;
  }

  private void addRestart(int offset) {
    if (restartCount == restarts.length) {
      restarts = java.util.Arrays.copyOf(restarts, restartCount * 2);
    }
    restarts[restartCount++] = offset;
  }

  public boolean isEmpty() {
    return entries == 0;
  }

  public int entries() {
    return entries;
  }

  public int estimatedSize() {
    int size = out.size() + restartCount * 4 + 4;
    return hashIndex ? size + DataBlockHash.bucketCount(entries) + 2 : size;
  }

  public void add(byte[] key, byte[] value) {
    add(key, value, hashIndex ? BloomFilter.hash(key) : 0);
  }

  /** As {@link #add(byte[], byte[])} with {@code hash}, {@link BloomFilter#hash} of {@code key}. */
  public void add(byte[] key, byte[] value, long hash) {
    add(key, 0, key.length, value, 0, value.length, hash);
  }

  /** As {@link #add(byte[], byte[], long)} with key and value given as slices. */
  public void add(
      byte[] key, int keyOff, int keyLen, byte[] value, int valueOff, int valueLen, long hash) {
    if (hashIndex) {
      if (entries == hashes.length) {
        hashes = java.util.Arrays.copyOf(hashes, entries * 2);
      }
      hashes[entries] = hash;
    }
    int shared = 0;
    if (counter == restartInterval) {
      addRestart(out.size());
      counter = 0;
    } else if (entries > 0) {
      shared = Bytes.commonPrefix(lastKey, lastKeyLen, key, keyOff, keyLen);
    }
    out.writeVarInt(shared);
    out.writeVarInt(keyLen - shared);
    out.writeVarInt(valueLen);
    out.writeBytes(key, keyOff + shared, keyLen - shared);
    out.writeBytes(value, valueOff, valueLen);
    if (lastKey.length < keyLen) {
      lastKey = new byte[Math.max(keyLen, lastKey.length * 2)];
    }
    System.arraycopy(key, keyOff, lastKey, 0, keyLen);
    lastKeyLen = keyLen;
    counter++;
    entries++;
  }

  /** Returns the finished block bytes; the builder must be reset before reuse. */
  public byte[] finish() {
    int length = finishInPlace();
    return java.util.Arrays.copyOf(out.array(), length);
  }

  /**
   * Finishes the block without copying it: it is the first returned-length bytes of {@link
   * #buffer()}, valid until the builder is reset.
   */
  public int finishInPlace() {
    for (int i = 0; i < restartCount; i++) {
      out.writeInt(restarts[i]);
    }
    if (hashIndex && restartCount <= DataBlockHash.MAX_RESTARTS) {
      int count = DataBlockHash.bucketCount(entries);
      if (buckets.length < count) {
        buckets = new byte[count];
      }
      DataBlockHash.write(out, hashes, entries, restartInterval, buckets);
      out.writeInt(restartCount | DataBlockHash.FLAG);
    } else {
      out.writeInt(restartCount);
    }
    return out.size();
  }

  /** The builder's buffer, holding a block {@link #finishInPlace} finished. */
  public byte[] buffer() {
    return out.array();
  }
}
