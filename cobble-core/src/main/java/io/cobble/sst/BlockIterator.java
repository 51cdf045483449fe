package io.cobble.sst;

import io.cobble.cache.BlockCache;
import io.cobble.iterator.KvEntry;
import io.cobble.iterator.KvIterator;
import io.cobble.util.ByteReader;
import io.cobble.util.Bytes;
import io.cobble.util.ValueSink;
import java.util.Arrays;

/** Cursor over a {@link Block}: binary search over restart points, then a linear scan. */
public final class BlockIterator implements KvIterator {
  private byte[] data;
  // Where the entries end; in a block as stored, the restart positions follow.
  private int restartsOffset;
  private int restartCount;
  // Where the restart positions are: after the entries, or in a kept block's header.
  private int restartTable;

  /** Offset of the {@link DataBlockHash} buckets, and their count (0: no hash index). */
  private int hashOffset;

  private int buckets;

  /**
   * For a block {@link #kept} with its restart words: where the restart keys' common prefix starts,
   * its length, and where the words start (0: no words, the restart search reads keys).
   */
  private int commonOffset;

  private int commonLength;
  private int wordsOffset;

  // The bytes the current key shares with the entry before it: its shared-prefix length, as the
  // block stores it.
  private int sharedWithPrevious;

  // What prepareKept measured for writeKept: the raw block's length, the restart keys' common
  // prefix length and where the first restart key lies.
  private int rawLength;
  private int keptCommon;
  private int keptFirstAt;
  private final ByteReader reader = new ByteReader();
  // The lengths readHeader read: the entry's shared prefix, unshared key bytes and value.
  private int headerShared;
  private int headerUnshared;
  private int headerValue;
  private byte[] key = new byte[32];
  private int keyLen;
  private int valueOff;
  private int valueLen;
  private int nextOffset;
  // The key passBelow stopped at: bytes it shares with the previous key, and its own.
  private int stopShared;
  private int stopUnshared;
  private boolean valid;

  BlockIterator(Block block) {
    reset(block);
  }

  /** An unpositioned iterator; {@link #reset} it onto a block before use. */
  BlockIterator() {}

  /** Repositions this iterator onto another block (unpositioned); lets one iterator serve gets. */
  BlockIterator reset(Block block) {
    buckets = 0;
    return reset(block.data(), block.restartsOffset(), block.restartCount());
  }

  /**
   * Repositions this iterator onto a decoded block held in the first {@code length} bytes of {@code
   * raw}, validating it as {@link Block} does (IllegalStateException if the trailer is bad).
   */
  BlockIterator reset(byte[] raw, int length) {
    int count = Block.restartCountOf(raw, length);
    int end = Block.restartsEnd(raw, length, Bytes.getInt(raw, length - 4));
    hashOffset = end;
    buckets = end == length - 4 ? 0 : length - 6 - end;
    return reset(raw, end - count * 4, count);
  }

  /** Where a kept form's own header starts: after the bytes the block cache keeps for itself. */
  private static final int HEADER_AT = BlockCache.RESERVED_BYTES;

  /** Where a kept form's header ends: four int32 fields, see {@link #kept}. */
  private static final int KEPT_HEADER = HEADER_AT + 16;

  /**
   * The bytes a table keeps for the decoded block {@code raw} ({@link ResidentBlocks}), and the
   * form the block cache holds data blocks in. What a point read needs first comes first, next to
   * the array's own header, so that finding the restart to scan from touches the block's first
   * cache lines instead of its end: bytes the block cache keeps for itself ({@link
   * BlockCache#RESERVED_BYTES}, which this class never writes), a header (the restart count, the
   * common prefix length, where the entries end as a position in the kept array, and the hash
   * index's bucket count), each restart's position, one search word per restart (the eight key
   * bytes after the restart keys' common prefix, as {@link DecodedIndex} keeps them per index
   * entry), that common prefix, then the block itself. Throws IllegalStateException when the block
   * is malformed.
   */
  static byte[] kept(byte[] raw) {
    BlockIterator it = new BlockIterator();
    byte[] out = new byte[it.prepareKept(raw, raw.length)];
    it.writeKept(out);
    return out;
  }

  /**
   * Repositions this iterator onto the decoded block in the first {@code length} bytes of {@code
   * raw}, as {@link #reset(byte[], int)} does, and returns the length of its {@link #kept} form,
   * which {@link #writeKept} then writes. Throws IllegalStateException when the block is malformed.
   */
  int prepareKept(byte[] raw, int length) {
    reset(raw, length);
    rawLength = length;
    keptCommon = 0;
    keptFirstAt = 0;
    int n = restartCount;
    if (n > 0) {
      long first = restartKey(0);
      long last = restartKey(n - 1);
      keptFirstAt = (int) (first >>> 32);
      int m = Bytes.mismatch(raw, keptFirstAt, (int) first, raw, (int) (last >>> 32), (int) last);
      keptCommon = m < 0 ? (int) first : m;
    }
    long kept = keptBase(n, keptCommon) + length;
    if (kept > Integer.MAX_VALUE - 16) {
      throw new IllegalStateException("block too large to keep: " + length + " bytes");
    }
    return (int) kept;
  }

  /**
   * Writes the kept form of the block {@link #prepareKept} measured into the first bytes of {@code
   * out} (at least that long); this iterator is then unpositioned.
   */
  void writeKept(byte[] out) {
    byte[] raw = data;
    int n = restartCount;
    int common = keptCommon;
    int base = (int) keptBase(n, common);
    Bytes.putInt(out, HEADER_AT, n);
    Bytes.putInt(out, HEADER_AT + 4, common);
    Bytes.putInt(out, HEADER_AT + 8, base + restartsOffset);
    Bytes.putInt(out, HEADER_AT + 12, buckets);
    int words = KEPT_HEADER + 4 * n;
    for (int i = 0; i < n; i++) {
      long k = restartKey(i);
      Bytes.putInt(out, KEPT_HEADER + 4 * i, base + restart(i));
      Bytes.putLong(
          out,
          words + 8 * i,
          DecodedIndex.prefix(raw, (int) (k >>> 32) + common, (int) k - common));
    }
    System.arraycopy(raw, keptFirstAt, out, words + 8 * n, common);
    System.arraycopy(raw, 0, out, base, rawLength);
    valid = false;
  }

  /** Where a kept form's block starts: after the header, positions, words and common prefix. */
  private static long keptBase(long n, long common) {
    return KEPT_HEADER + 12 * n + common;
  }

  /**
   * Repositions this iterator onto a block in the form {@link #kept} returns, searching restarts by
   * its words and reading only the header's fields to get there; throws IllegalStateException when
   * the header does not describe the array.
   */
  BlockIterator resetKept(byte[] kept) {
    return resetKept(kept, kept.length);
  }

  /**
   * As {@link #resetKept(byte[])} for a kept form in the first {@code length} bytes of {@code
   * kept}.
   */
  BlockIterator resetKept(byte[] kept, int length) {
    if (length < KEPT_HEADER + 4 || length > kept.length) {
      throw new IllegalStateException("kept block too short: " + length + " bytes");
    }
    int n = Bytes.getInt(kept, HEADER_AT);
    int common = Bytes.getInt(kept, HEADER_AT + 4);
    int entriesEnd = Bytes.getInt(kept, HEADER_AT + 8);
    int hashBuckets = Bytes.getInt(kept, HEADER_AT + 12);
    // The restart positions and the hash index follow the entries; the block's trailer ends it.
    long hashAt = entriesEnd + 4L * n;
    // The first restart is the block's first entry, at the position the counts derive.
    if (n < 1
        || common < 0
        || hashBuckets < 0
        || Bytes.getInt(kept, KEPT_HEADER) != keptBase(n, common)
        || entriesEnd < keptBase(n, common)
        || hashAt + hashBuckets != length - (hashBuckets == 0 ? 4 : 6)) {
      throw new IllegalStateException("bad kept block header");
    }
    reset(kept, entriesEnd, n);
    restartTable = KEPT_HEADER;
    hashOffset = (int) hashAt;
    buckets = hashBuckets;
    wordsOffset = KEPT_HEADER + 4 * n;
    commonOffset = wordsOffset + 8 * n;
    commonLength = common;
    return this;
  }

  /**
   * Copies where this {@link #resetKept kept} block's restarts lie into a table's {@link
   * RestartHints}: at most {@link RestartHints#PER_BLOCK} restarts, evenly spaced from the first,
   * each as the first four bytes of its search word (at {@code wordAt} on) and its position in the
   * kept array (at {@code positionAt} on), then where the entries end. Returns how many restarts it
   * copied: 0 for a block that is not kept or whose positions do not fit in a char.
   */
  int copyRestartHints(int[] words, int wordAt, char[] positions, int positionAt) {
    if (wordsOffset == 0 || restartCount == 0 || restartsOffset > Character.MAX_VALUE) {
      return 0;
    }
    int k = Math.min(RestartHints.PER_BLOCK, restartCount);
    for (int j = 0; j < k; j++) {
      int i = (int) ((long) j * restartCount / k);
      words[wordAt + j] = (int) (Bytes.getLong(data, wordsOffset + 8 * i) >>> 32);
      positions[positionAt + j] = (char) restart(i);
    }
    positions[positionAt + k] = (char) restartsOffset;
    return k;
  }

  /** The restart keys' common prefix length of a {@link #resetKept kept} block. */
  int keptCommonLength() {
    return commonLength;
  }

  /** The key of restart {@code i} (restart entries share no prefix): offset << 32 | length. */
  private long restartKey(int i) {
    int offset = restart(i);
    if (offset >= restartsOffset) {
      throw new IllegalStateException("restart " + i + " past the entries: " + offset);
    }
    int p = readRestartHeader(offset);
    return ((long) p << 32) | headerUnshared;
  }

  private BlockIterator reset(byte[] raw, int restartsOffset, int restartCount) {
    this.data = raw;
    this.restartsOffset = restartsOffset;
    this.restartTable = restartsOffset;
    this.restartCount = restartCount;
    this.wordsOffset = 0;
    this.keyLen = 0;
    this.valid = false;
    return this;
  }

  private int restart(int i) {
    return Bytes.getInt(data, restartTable + i * 4);
  }

  /**
   * Reads the header of the entry at {@code offset} (below {@link #restartsOffset}): its shared,
   * unshared and value lengths into {@link #headerShared}, {@link #headerUnshared} and {@link
   * #headerValue}; returns where its key bytes start. Most entries' three varints are one byte each
   * and are read by one int load (a block's entries are always followed by at least its restart
   * count, so the fourth byte exists); others go through the reader. Throws IllegalStateException
   * when the entry passes the end of the entries.
   */
  private int readHeader(int offset) {
    int h = Bytes.getInt(data, offset);
    if ((h & 0x80808000) == 0) {
      headerShared = h >>> 24;
      headerUnshared = (h >>> 16) & 0xFF;
      headerValue = (h >>> 8) & 0xFF;
      int p = offset + 3;
      if (p + headerUnshared + headerValue > restartsOffset) {
        throw new IllegalStateException("truncated entry at " + offset);
      }
      return p;
    }
    reader.reset(data, offset, restartsOffset - offset);
    headerShared = reader.readVarInt();
    headerUnshared = reader.readVarInt();
    headerValue = reader.readVarInt();
    int p = reader.position();
    reader.skip(headerUnshared);
    reader.skip(headerValue);
    return p;
  }

  /** {@link #readHeader} of a restart entry, which shares no prefix with the entry before it. */
  private int readRestartHeader(int offset) {
    int p = readHeader(offset);
    if (headerShared > 0) {
      throw new IllegalStateException("bad shared prefix " + headerShared + " at " + offset);
    }
    return p;
  }

  private boolean parseAt(int offset) {
    if (offset >= restartsOffset) {
      valid = false;
      return false;
    }
    int p = readHeader(offset);
    int shared = headerShared;
    int unshared = headerUnshared;
    int vlen = headerValue;
    if (shared > keyLen) {
      throw new IllegalStateException("bad shared prefix " + shared + " at " + offset);
    }
    if (key.length < shared + unshared) {
      key = Arrays.copyOf(key, Math.max(shared + unshared, key.length * 2));
    }
    System.arraycopy(data, p, key, shared, unshared);
    keyLen = shared + unshared;
    sharedWithPrevious = shared;
    valueOff = p + unshared;
    valueLen = vlen;
    nextOffset = valueOff + vlen;
    valid = true;
    return true;
  }

  private void seekToRestart(int i) {
    keyLen = 0;
    parseAt(restart(i));
  }

  @Override
  public void seekToFirst() {
    seekToRestart(0);
  }

  /**
   * Compares the key at restart point {@code i} with {@code target} in place (a restart entry
   * shares no prefix, so its key is contiguous in the block); a restart past the entries compares
   * as greater. Checks the entry exactly as {@link #parseAt} would.
   */
  private int compareAtRestart(int i, byte[] target) {
    int offset = restart(i);
    if (offset >= restartsOffset) {
      return 1;
    }
    int p = readRestartHeader(offset);
    return Bytes.compare(data, p, headerUnshared, target, 0, target.length);
  }

  /** The last restart whose key is below {@code target}, or 0: binary search over the restarts. */
  private int restartBefore(byte[] target) {
    if (wordsOffset > 0) {
      return restartBeforeByWords(target);
    }
    int lo = 0;
    int hi = restartCount - 1;
    while (lo < hi) {
      int mid = (lo + hi + 1) >>> 1;
      if (compareAtRestart(mid, target) < 0) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }

  /**
   * As {@link #restartBefore} for a {@link #resetKept kept} block: compares the target with the
   * restart keys' common prefix, then with the words, reading a restart key only when its word ties
   * with the target's.
   */
  private int restartBeforeByWords(byte[] target) {
    int c =
        Bytes.compare(
            data, commonOffset, commonLength, target, 0, Math.min(commonLength, target.length));
    if (c > 0 || (c == 0 && target.length < commonLength)) {
      return 0;
    }
    if (c < 0) {
      return Math.max(0, restartCount - 1);
    }
    long t = DecodedIndex.prefix(target, commonLength, target.length - commonLength);
    int lo = 0;
    int hi = restartCount - 1;
    while (lo < hi) {
      int mid = (lo + hi + 1) >>> 1;
      int cmp = Long.compareUnsigned(Bytes.getLong(data, wordsOffset + 8 * mid), t);
      if (cmp == 0) {
        cmp = compareAtRestart(mid, target);
      }
      if (cmp < 0) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }

  /**
   * Positions on the first key at or after {@code target}, passing the keys below it in place
   * ({@link #passBelow}) and building only the key it stops at: its shared part equals the target's
   * first bytes, so it is copied from there.
   */
  @Override
  public void seek(byte[] target) {
    if (passBelow(target, restart(restartBefore(target)), restartsOffset) == BEYOND) {
      keyLen = 0;
      valid = false;
      return;
    }
    int length = stopShared + stopUnshared;
    if (key.length < length) {
      key = Arrays.copyOf(key, Math.max(length, key.length * 2));
    }
    System.arraycopy(target, 0, key, 0, stopShared);
    System.arraycopy(data, valueOff - stopUnshared, key, stopShared, stopUnshared);
    keyLen = length;
    sharedWithPrevious = 0;
    nextOffset = valueOff + valueLen;
    valid = true;
  }

  /** {@link #passBelow} found a key equal to the target. */
  private static final int EQUAL = 0;

  /** {@link #passBelow} found a key after the target. */
  private static final int AFTER = 1;

  /** {@link #passBelow} reached its limit with every key below the target. */
  private static final int BEYOND = 2;

  /**
   * Reads entries from {@code offset} (a restart) up to {@code limit} and stops at the first key at
   * or after {@code target}, leaving its value in {@link #valueOff}/{@link #valueLen} and its
   * shared and unshared lengths in {@link #stopShared}/{@link #stopUnshared}; returns {@link
   * #EQUAL}, {@link #AFTER} or {@link #BEYOND}. Keys are compared in place, not rebuilt: while a
   * key is below the target and differs from it first at byte {@code m}, a following key that
   * shares more than {@code m} bytes with it is below the target too and is passed without a
   * comparison; only a key sharing at most {@code m} bytes compares its own bytes, and only from
   * the shared length on.
   */
  private int passBelow(byte[] target, int offset, int limit) {
    int previousLength = 0;
    // Bytes the previous key (below the target) has in common with the target.
    int matched = 0;
    while (offset < limit) {
      int p = readHeader(offset);
      int shared = headerShared;
      int unshared = headerUnshared;
      int vlen = headerValue;
      if (shared > previousLength) {
        throw new IllegalStateException("bad shared prefix " + shared + " at " + offset);
      }
      offset = p + unshared + vlen;
      previousLength = shared + unshared;
      if (shared > matched) {
        continue;
      }
      int rest = target.length - shared;
      int m = Bytes.mismatch(data, p, unshared, target, shared, rest);
      if (m >= 0
          && (m == unshared || (m < rest && (data[p + m] & 0xFF) < (target[shared + m] & 0xFF)))) {
        // This key is still below the target (a proper prefix of it, or smaller at byte m).
        matched = shared + m;
        continue;
      }
      stopShared = shared;
      stopUnshared = unshared;
      valueOff = p + unshared;
      valueLen = vlen;
      return m < 0 ? EQUAL : AFTER;
    }
    return BEYOND;
  }

  /**
   * Point lookup: whether the block holds exactly {@code target}, leaving its value current for
   * {@link #valueTo} (but no key: the iterator is unpositioned afterwards). After the restart
   * search, keys are compared in place ({@link #passBelow}). With a {@link DataBlockHash} index,
   * {@code hash} ({@link BloomFilter#hash} of the target) picks the one restart group to scan, or
   * answers "absent" from an empty bucket.
   */
  boolean seekExact(byte[] target, long hash) {
    valid = false;
    keyLen = 0;
    int lo = -1;
    int limit = restartsOffset;
    if (buckets > 0) {
      int group = data[hashOffset + DataBlockHash.bucket(hash, buckets)] & 0xFF;
      if (group == DataBlockHash.EMPTY) {
        return false;
      }
      if (group != DataBlockHash.COLLISION) {
        if (group >= restartCount) {
          throw new IllegalStateException("bad hash index entry " + group);
        }
        lo = group;
        if (group + 1 < restartCount) {
          limit = restart(group + 1);
        }
      }
    }
    if (lo < 0) {
      lo = restartBefore(target);
    }
    return passBelow(target, restart(lo), limit) == EQUAL;
  }

  @Override
  public boolean valid() {
    return valid;
  }

  @Override
  public void next() {
    parseAt(nextOffset);
  }

  @Override
  public int sharedWithPrevious() {
    return sharedWithPrevious;
  }

  @Override
  public boolean currentInto(KvEntry to) {
    if (!valid) {
      return false;
    }
    to.set(key, 0, keyLen, sharedWithPrevious, data, valueOff, valueLen);
    return true;
  }

  @Override
  public byte[] key() {
    return Arrays.copyOf(key, keyLen);
  }

  @Override
  public byte[] value() {
    return Arrays.copyOfRange(data, valueOff, valueOff + valueLen);
  }

  @Override
  public byte[] keyArray() {
    return key;
  }

  @Override
  public int keyOffset() {
    return 0;
  }

  @Override
  public int keyLength() {
    return keyLen;
  }

  @Override
  public byte[] valueArray() {
    return data;
  }

  @Override
  public int valueOffset() {
    return valueOff;
  }

  @Override
  public int valueLength() {
    return valueLen;
  }

  /** Hands the current value to {@code sink} in place. */
  void valueTo(ValueSink sink) {
    sink.accept(data, valueOff, valueLen);
  }

  /** Points {@code r} at the current value without copying it. */
  public ByteReader valueReader(ByteReader r) {
    return r.reset(data, valueOff, valueLen);
  }

  /** Copies the current key into {@code dst} at {@code pos}; returns its length. */
  int copyKey(byte[] dst, int pos) {
    System.arraycopy(key, 0, dst, pos, keyLen);
    return keyLen;
  }

  /** Compares the current key without copying it. */
  public int compareKey(byte[] other) {
    return Bytes.compare(key, 0, keyLen, other, 0, other.length);
  }

  @Override
  public void close() {}
}
