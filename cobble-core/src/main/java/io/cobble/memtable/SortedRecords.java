package io.cobble.memtable;

import java.lang.ref.SoftReference;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Sorts record addresses by key (stable, so insertion order survives among equal keys) and serves
 * them through a cursor. Used by the unordered memtables when something needs key order.
 *
 * <p>The sort works on packed triples (normalized key word 0, word 1, address; see {@link
 * Arena#normalizedKey}) kept next to each other, so most comparisons read two adjacent longs of a
 * sequentially scanned array instead of two records scattered over the arena's pages; only keys
 * that share their first 15 bytes and are at least that long fall back to the full arena compare.
 * When few bytes of the normalized keys vary (fixed-width keys of a narrow range, one family and a
 * few buckets, as a sink shard writes them), a stable radix sort over just those bytes replaces the
 * comparisons.
 *
 * <p>When all keys differ in at most 15 byte positions, the packed words hold just those bytes
 * instead of the first 15 ({@link #packVaryingBytes}), so keys that share a long prefix (a Flink
 * map state's user keys under one key) never tie. Either way the words are only meaningful within
 * one sort: {@link #compare} orders records of the same packed array.
 */
final class SortedRecords {
  /** Longs per packed record: two normalized key words and the address. */
  static final int STRIDE = 3;

  /**
   * Radix sorting reads every record once per varying normalized-key byte; with more varying bytes
   * than this the merge sort, whose comparisons mostly stop at the first word, is cheaper.
   */
  static final int MAX_RADIX_PASSES = 8;

  /** Runs of this many records are insertion-sorted before merging. */
  private static final int RUN = 16;

  // Spare sort arrays. A flush sorts a memtable of about the size of the last one, and two new
  // arrays of 24 bytes per record per sort (humongous for G1, zeroed on allocation) were a third of
  // what the state backend allocated in mapPutAll. Soft: memory pressure can still take them. A
  // one-word radix sort takes two arrays of one long per record beside the packed one.
  private static final int SPARES = 4;
  private static final int MIN_SPARE_LENGTH = 1 << 12;
  private static final AtomicReferenceArray<SoftReference<long[]>> spares =
      new AtomicReferenceArray<>(SPARES);

  private SortedRecords() {}

  /** Addresses of the first {@code count} records in key order (stable). */
  static long[] sort(Arena arena, long[] addrs, int count) {
    long[] packed = sortPacked(arena, addrs, count);
    long[] out = new long[count];
    for (int i = 0; i < count; i++) {
      out[i] = packed[i * STRIDE + 2];
    }
    release(packed);
    return out;
  }

  /**
   * The first {@code count} records as packed triples in key order (stable): record {@code i} is at
   * {@code i * STRIDE}, its address at {@code i * STRIDE + 2}. The array may be longer than that;
   * {@link #release} it once it is no longer read.
   */
  static long[] sortPacked(Arena arena, long[] addrs, int count) {
    return sortPacked(arena, addrs, count, null, MAX_RADIX_PASSES);
  }

  /**
   * As {@link #sortPacked(Arena, long[], int)} for records whose keys' {@link KeyShape} is known,
   * or was gathered over more keys than these; null to find it.
   */
  static long[] sortPacked(Arena arena, long[] addrs, int count, KeyShape shape) {
    return sortPacked(arena, addrs, count, shape, MAX_RADIX_PASSES);
  }

  /**
   * As {@link #sortPacked(Arena, long[], int)}, radix-sorting when at most {@code maxRadixPasses}
   * bytes of the normalized keys vary.
   */
  static long[] sortPacked(Arena arena, long[] addrs, int count, int maxRadixPasses) {
    return sortPacked(arena, addrs, count, null, maxRadixPasses);
  }

  private static long[] sortPacked(
      Arena arena, long[] addrs, int count, KeyShape shape, int maxRadixPasses) {
    int len = Math.multiplyExact(count, STRIDE);
    long[] src = scratch(len);
    boolean packed =
        shape == null
            ? packVaryingBytes(arena, addrs, count, src)
            : packVaryingBytes(arena, addrs, count, src, shape);
    if (!packed) {
      for (int i = 0; i < count; i++) {
        int at = i * STRIDE;
        arena.normalizedKey(addrs[i], src, at);
        src[at + 2] = addrs[i];
      }
    }
    if (count > RUN) {
      int[] varying = varyingBytes(src, count);
      if (varying.length <= maxRadixPasses) {
        return fitsOneWord(varying, count)
            ? radixSortOneWord(arena, src, addrs, count, varying)
            : radixSort(arena, src, count, varying);
      }
    }
    return mergeSort(arena, src, count);
  }

  /** Bits of a record's index beside its key bits in {@link #radixSortOneWord}. */
  private static int indexBits(int count) {
    return 32 - Integer.numberOfLeadingZeros(count - 1);
  }

  /**
   * Whether the varying bytes all lie in the first normalized word, within a span that fits one
   * long beside each record's index.
   */
  static boolean fitsOneWord(int[] varying, int count) {
    if (varying.length == 0 || varying[varying.length - 1] >= 8) {
      return false;
    }
    int span = varying[varying.length - 1] - varying[0] + 1;
    return 8 * span + indexBits(count) <= 64;
  }

  /**
   * An array of at least {@code length} longs with any contents: the smallest spare that is long
   * enough (so a short request leaves the long spares to the packed arrays), or a new one.
   */
  static long[] scratch(int length) {
    if (length >= MIN_SPARE_LENGTH) {
      while (true) {
        int best = -1;
        SoftReference<long[]> bestRef = null;
        long[] bestArray = null;
        for (int i = 0; i < SPARES; i++) {
          SoftReference<long[]> ref = spares.get(i);
          long[] a = ref == null ? null : ref.get();
          if (a != null
              && a.length >= length
              && (bestArray == null || a.length < bestArray.length)) {
            best = i;
            bestRef = ref;
            bestArray = a;
          }
        }
        if (bestArray == null) {
          break;
        }
        if (spares.compareAndSet(best, bestRef, null)) {
          return bestArray;
        }
      }
    }
    return new long[length];
  }

  /**
   * Keeps {@code a}, which nobody reads any more, as a spare for the next sort: in an empty slot,
   * or in place of the shortest spare if that is shorter. Each array is released at most once.
   */
  static void release(long[] a) {
    if (a.length < MIN_SPARE_LENGTH) {
      return;
    }
    while (true) {
      // An empty slot, else the one holding the shortest array if that is shorter than a.
      int slot = -1;
      SoftReference<long[]> slotRef = null;
      int slotLength = a.length;
      for (int i = 0; i < SPARES && slotLength > 0; i++) {
        SoftReference<long[]> ref = spares.get(i);
        long[] held = ref == null ? null : ref.get();
        int length = held == null ? 0 : held.length;
        if (length < slotLength) {
          slot = i;
          slotRef = ref;
          slotLength = length;
        }
      }
      if (slot < 0 || spares.compareAndSet(slot, slotRef, new SoftReference<>(a))) {
        return;
      }
    }
  }

  /**
   * When the keys are at most {@link KeyShape#MAX_WORDS} words long and differ in at most {@link
   * Arena#NORMALIZED_BYTES} byte positions (counting the length as one when lengths differ), packs
   * each record as just those bytes, in key order, followed by the length and a zero last byte, and
   * returns true. Bytes at the other positions are the same in every key (zero past a key's end),
   * so comparing the packed words orders exactly like {@link io.cobble.util.Bytes#compare} and
   * equal words mean equal keys: the sort never reads the arena again. Keys of one shape (a Flink
   * map state's key, namespace and user key) vary in a handful of bytes beyond the first 15, where
   * the plain normalized key would tie and fall back to comparing records in the arena.
   */
  static boolean packVaryingBytes(Arena arena, long[] addrs, int count, long[] dst) {
    if (count <= 1) {
      return false;
    }
    KeyShape shape = new KeyShape();
    for (int i = 0; i < count; i++) {
      arena.addKeyTo(addrs[i], shape);
      // The varying positions only grow: stop scanning as soon as there are too many.
      if ((i & 1023) == 1023
          && (shape.tooLong() || shape.varyingCount() > Arena.NORMALIZED_BYTES)) {
        return false;
      }
    }
    return packVaryingBytes(arena, addrs, count, dst, shape);
  }

  /**
   * As {@link #packVaryingBytes(Arena, long[], int, long[])} with the keys' {@code shape} already
   * known; a shape gathered over more keys than these (varying in more positions) packs them just
   * as exactly.
   */
  static boolean packVaryingBytes(
      Arena arena, long[] addrs, int count, long[] dst, KeyShape shape) {
    if (count <= 1 || shape.tooLong() || shape.varyingCount() > Arena.NORMALIZED_BYTES) {
      return false;
    }
    boolean lengthVaries = shape.lengthVaries();
    int[] positions = shape.positions();
    int n = positions.length;
    long[] words = new long[KeyShape.MAX_WORDS];
    // Only the words up to the last varying byte are read again.
    int needed = n == 0 ? 0 : (positions[n - 1] >>> 3) + 1;
    for (int i = 0; i < count; i++) {
      int len = arena.keyWords(addrs[i], words, 0, needed);
      long w0 = 0;
      long w1 = 0;
      for (int k = 0; k < n; k++) {
        int b = positions[k];
        long v = words[b >>> 3] >>> (56 - 8 * (b & 7)) & 0xFF;
        if (k < 8) {
          w0 |= v << (56 - 8 * k);
        } else {
          w1 |= v << (120 - 8 * k);
        }
      }
      if (lengthVaries) {
        // After the zero-padded bytes, the length orders a key before its zero-extended forms.
        if (n < 8) {
          w0 |= (long) len << (56 - 8 * n);
        } else {
          w1 |= (long) len << (120 - 8 * n);
        }
      }
      int at = i * STRIDE;
      dst[at] = w0;
      dst[at + 1] = w1;
      dst[at + 2] = addrs[i];
    }
    return true;
  }

  /** Stable bottom-up merge sort of packed records; returns the array holding the result. */
  private static long[] mergeSort(Arena arena, long[] src, int count) {
    for (int lo = 0; lo < count; lo += RUN) {
      insertionSort(arena, src, lo, Math.min(lo + RUN, count));
    }
    if (count <= RUN) {
      return src;
    }
    long[] dst = scratch(count * STRIDE);
    for (int width = RUN; width < count; width *= 2) {
      for (int lo = 0; lo < count; lo += 2 * width) {
        int mid = Math.min(lo + width, count);
        merge(arena, src, dst, lo, mid, Math.min(lo + 2 * width, count));
      }
      long[] t = src;
      src = dst;
      dst = t;
    }
    release(dst);
    return src;
  }

  /**
   * The positions (0-15, most significant first) of the normalized-key bytes that differ between
   * some records; sorting by the others changes nothing.
   */
  private static int[] varyingBytes(long[] packed, int count) {
    long and0 = -1;
    long or0 = 0;
    long and1 = -1;
    long or1 = 0;
    for (int i = 0; i < count; i++) {
      int at = i * STRIDE;
      and0 &= packed[at];
      or0 |= packed[at];
      and1 &= packed[at + 1];
      or1 |= packed[at + 1];
    }
    long diff0 = and0 ^ or0;
    long diff1 = and1 ^ or1;
    int[] bytes = new int[16];
    int n = 0;
    for (int b = 0; b < 16; b++) {
      long diff = b < 8 ? diff0 : diff1;
      if ((diff >>> (56 - 8 * (b & 7)) & 0xFF) != 0) {
        bytes[n++] = b;
      }
    }
    return Arrays.copyOf(bytes, n);
  }

  /**
   * Stable LSD radix sort on the varying normalized-key bytes, one counting pass per byte; records
   * whose normalized keys tie without settling the order (both keys at least 15 bytes long) are
   * then ordered by their full keys.
   */
  private static long[] radixSort(Arena arena, long[] src, int count, int[] varying) {
    long[] dst = scratch(count * STRIDE);
    int[] starts = new int[257];
    for (int p = varying.length - 1; p >= 0; p--) {
      int word = varying[p] >>> 3;
      int shift = 56 - 8 * (varying[p] & 7);
      Arrays.fill(starts, 0);
      for (int i = 0; i < count; i++) {
        starts[(int) (src[i * STRIDE + word] >>> shift & 0xFF) + 1]++;
      }
      for (int d = 0; d < 256; d++) {
        starts[d + 1] += starts[d];
      }
      for (int i = 0; i < count; i++) {
        int at = i * STRIDE;
        int to = starts[(int) (src[at + word] >>> shift & 0xFF)]++ * STRIDE;
        dst[to] = src[at];
        dst[to + 1] = src[at + 1];
        dst[to + 2] = src[at + 2];
      }
      long[] t = src;
      src = dst;
      dst = t;
    }
    release(dst);
    sortTies(arena, src, count);
    return src;
  }

  /**
   * The radix sort of {@link #radixSort} on one long per record instead of a triple: the span of
   * the first word that varies, above the record's index (which keeps the sort stable and finds the
   * record again). A pass moves 8 bytes per record instead of 24, and the counts of every pass come
   * from one read; the triples are rebuilt in key order at the end (every other byte of the words
   * is the same in all of them). A flush of a Flink map state's memtable (five varying bytes, a
   * million records) sorts this way.
   */
  private static long[] radixSortOneWord(
      Arena arena, long[] src, long[] addrs, int count, int[] varying) {
    int indexBits = indexBits(count);
    int span = varying[varying.length - 1] - varying[0] + 1;
    int shift = 64 - 8 * (varying[0] + span);
    long spanMask = (span == 8 ? -1L : (1L << (8 * span)) - 1) << shift;
    long base = src[0] & ~spanMask;
    long second = src[1];
    long[] keys = scratch(count);
    long[] other = scratch(count);
    int[][] starts = new int[span][257];
    for (int i = 0; i < count; i++) {
      long bits = (src[i * STRIDE] & spanMask) >>> shift;
      keys[i] = bits << indexBits | i;
      for (int p = 0; p < span; p++) {
        starts[p][(int) (bits >>> (8 * p) & 0xFF) + 1]++;
      }
    }
    for (int p = 0; p < span; p++) {
      int[] st = starts[p];
      if (st[(int) (keys[0] >>> (indexBits + 8 * p) & 0xFF) + 1] == count) {
        // One digit for all: this byte varies only outside the varying positions' span.
        continue;
      }
      for (int d = 0; d < 256; d++) {
        st[d + 1] += st[d];
      }
      int digitShift = indexBits + 8 * p;
      for (int i = 0; i < count; i++) {
        long k = keys[i];
        other[st[(int) (k >>> digitShift & 0xFF)]++] = k;
      }
      long[] t = keys;
      keys = other;
      other = t;
    }
    long indexMask = (1L << indexBits) - 1;
    for (int j = 0; j < count; j++) {
      long k = keys[j];
      int at = j * STRIDE;
      src[at] = base | (k >>> indexBits) << shift;
      src[at + 1] = second;
      src[at + 2] = addrs[(int) (k & indexMask)];
    }
    release(keys);
    release(other);
    sortTies(arena, src, count);
    return src;
  }

  /** Orders runs of equal normalized keys that stand for keys of 15 bytes or more. */
  private static void sortTies(Arena arena, long[] a, int count) {
    int i = 0;
    while (i < count) {
      int at = i * STRIDE;
      int end = i + 1;
      if ((a[at + 1] & 0xFF) >= Arena.NORMALIZED_BYTES) {
        while (end < count && a[end * STRIDE] == a[at] && a[end * STRIDE + 1] == a[at + 1]) {
          end++;
        }
      }
      if (end - i > RUN) {
        long[] run = Arrays.copyOfRange(a, at, end * STRIDE);
        System.arraycopy(mergeSort(arena, run, end - i), 0, a, at, run.length);
      } else if (end - i > 1) {
        // Short runs (a few versions or columns of one key) sort in place: no copy per run.
        insertionSort(arena, a, i, end);
      }
      i = end;
    }
  }

  /**
   * Orders packed records {@code x[i..]} and {@code y[j..]} (offsets of triples) exactly like
   * {@link io.cobble.util.Bytes#compare} on their keys; only the sign is meaningful.
   */
  static int compare(Arena arena, long[] x, int i, long[] y, int j) {
    int c = Long.compareUnsigned(x[i], y[j]);
    if (c != 0) {
      return c;
    }
    long w1 = x[i + 1];
    c = Long.compareUnsigned(w1, y[j + 1]);
    if (c != 0 || (w1 & 0xFF) < Arena.NORMALIZED_BYTES) {
      return c;
    }
    return arena.compareKeys(x[i + 2], y[j + 2]);
  }

  private static void insertionSort(Arena arena, long[] a, int lo, int hi) {
    for (int i = lo + 1; i < hi; i++) {
      int at = i * STRIDE;
      long w0 = a[at];
      long w1 = a[at + 1];
      long addr = a[at + 2];
      int j = at - STRIDE;
      while (j >= lo * STRIDE && greater(arena, a, j, w0, w1, addr)) {
        a[j + STRIDE] = a[j];
        a[j + STRIDE + 1] = a[j + 1];
        a[j + STRIDE + 2] = a[j + 2];
        j -= STRIDE;
      }
      a[j + STRIDE] = w0;
      a[j + STRIDE + 1] = w1;
      a[j + STRIDE + 2] = addr;
    }
  }

  /** Whether packed record {@code a[j..]} sorts strictly after the record given by its parts. */
  private static boolean greater(Arena arena, long[] a, int j, long w0, long w1, long addr) {
    int c = Long.compareUnsigned(a[j], w0);
    if (c != 0) {
      return c > 0;
    }
    c = Long.compareUnsigned(a[j + 1], w1);
    if (c != 0 || (w1 & 0xFF) < Arena.NORMALIZED_BYTES) {
      return c > 0;
    }
    return arena.compareKeys(a[j + 2], addr) > 0;
  }

  /** Merges sorted record ranges [lo, mid) and [mid, hi) of src into dst, left first on ties. */
  private static void merge(Arena arena, long[] src, long[] dst, int lo, int mid, int hi) {
    if (mid >= hi || compare(arena, src, (mid - 1) * STRIDE, src, mid * STRIDE) <= 0) {
      System.arraycopy(src, lo * STRIDE, dst, lo * STRIDE, (hi - lo) * STRIDE);
      return;
    }
    int i = lo * STRIDE;
    int iEnd = mid * STRIDE;
    int j = iEnd;
    int jEnd = hi * STRIDE;
    int k = i;
    while (i < iEnd && j < jEnd) {
      int from;
      if (compare(arena, src, i, src, j) <= 0) {
        from = i;
        i += STRIDE;
      } else {
        from = j;
        j += STRIDE;
      }
      dst[k] = src[from];
      dst[k + 1] = src[from + 1];
      dst[k + 2] = src[from + 2];
      k += STRIDE;
    }
    if (i < iEnd) {
      System.arraycopy(src, i, dst, k, iEnd - i);
    } else {
      System.arraycopy(src, j, dst, k, jEnd - j);
    }
  }

  /** First index whose key is >= target in a sorted, de-duplicated array. */
  static int lowerBound(Arena arena, long[] sorted, int count, byte[] target) {
    return lowerBound(arena, sorted, count, target, target.length);
  }

  /** As {@link #lowerBound(Arena, long[], int, byte[])} for the first {@code targetLen} bytes. */
  static int lowerBound(Arena arena, long[] sorted, int count, byte[] target, int targetLen) {
    int lo = 0;
    int hi = count;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (arena.compareKey(sorted[mid], target, targetLen) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /**
   * Cursor over sorted unique records. A non-null {@code values[i]} is record i's combined row;
   * otherwise (or without {@code values}) the row is read from the record itself.
   */
  static final class ArrayCursor implements MemTable.Cursor {
    /** Records {@link #visitAll} loads ahead of the one it hands over, in batches this size. */
    static final int TOUCH_BATCH = 16;

    private final Arena arena;
    private final long[] keys;
    private final byte[][] values;
    private final int count;
    private int pos;
    // Keeps the sum of the loads visitAll makes ahead, so the compiler cannot drop them (a static:
    // a field of a cursor that escape analysis removes would not keep them).
    private static int touched;

    ArrayCursor(Arena arena, long[] keys, byte[][] values, int count) {
      this.arena = arena;
      this.keys = keys;
      this.values = values;
      this.count = count;
      this.pos = count;
    }

    @Override
    public void seekToFirst() {
      pos = 0;
    }

    @Override
    public void seek(byte[] target) {
      pos = lowerBound(arena, keys, count, target);
    }

    @Override
    public boolean valid() {
      return pos < count;
    }

    @Override
    public void next() {
      pos++;
    }

    @Override
    public byte[] key() {
      return arena.key(keys[pos]);
    }

    @Override
    public byte[] value() {
      return values == null || values[pos] == null ? arena.value(keys[pos]) : values[pos];
    }

    @Override
    public void visit(MemTable.RowVisitor visitor) {
      if (values == null || values[pos] == null) {
        arena.recordTo(keys[pos], visitor);
      } else {
        arena.recordTo(keys[pos], values[pos], visitor);
      }
    }

    /**
     * Visits every row, loading the records of the next batch (scattered over the arena in append
     * order) before handing over those of the current one: the batch's loads are independent, so
     * the CPU overlaps their cache and TLB misses instead of stalling on each record in turn, as a
     * visit in key order otherwise does.
     */
    @Override
    public void visitAll(MemTable.RowVisitor visitor) {
      int sum = 0;
      for (pos = 0; pos < count; pos++) {
        if (pos % TOUCH_BATCH == 0) {
          sum += arena.touch(keys, pos + TOUCH_BATCH, Math.min(count, pos + 2 * TOUCH_BATCH));
        }
        visit(visitor);
      }
      touched = sum;
    }
  }
}
