package io.cobble.iterator;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.row.ColumnLayout;
import io.cobble.row.ConcatFold;
import io.cobble.row.RowState;
import io.cobble.row.ValueLoader;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import io.cobble.util.Bytes;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

/**
 * Merges sorted sources of one tree, given newest first, into one row per key: the newest source's
 * row with each older source's row folded underneath ({@link RowState#mergeOlder}). Keys and rows
 * are read in place from the sources' buffers ({@link KvIterator#keyArray()}); the current key is
 * kept in a reused buffer, so moving allocates nothing but the decoded column values.
 *
 * <p>Each source's key is also held as three words (its first 24 bytes big-endian, zero-padded), so
 * the heap's comparisons read three adjacent longs and the key lengths instead of two slices of the
 * sources' blocks; only keys longer than 24 bytes that share their first 24 compare in full. Keyed
 * state's map entries (family and bucket, key, namespace, user key: 23 bytes for long keys) of one
 * key share much more than their first 15 bytes, and the sources of a compaction meet at the same
 * key often, so a shorter prefix sent most of their comparisons to the full compare.
 *
 * <p>Over one source there is nothing to merge: its keys and rows are read where they lie, with no
 * heap and no copy, and the source moves only when this iterator does. A per-key scan whose filters
 * leave one source is the common case, so callers read the key and the encoded row at {@link
 * #keyOffset()} and {@link #encodedOffset()}.
 */
public final class RowMergingIterator implements AutoCloseable {
  /** Key bytes held in the prefix words. */
  private static final int PREFIX_BYTES = 24;

  /** Longs per source in {@link #prefix}. */
  private static final int WORDS = 3;

  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private KvIterator[] sources = new KvIterator[0];
  private String[] names = new String[0];
  private int count;
  private ColumnLayout layout;
  private ValueLoader loader;
  private int[] heap = new int[0];
  // Each source's current key in place (its array, offset and length), refreshed when it moves.
  private byte[][] keys = new byte[0][];
  private int[] keyOffsets = new int[0];
  private int[] keyLengths = new int[0];
  // Each source's prefix words: source s's at [s * WORDS, s * WORDS + WORDS).
  private long[] prefix = new long[0];
  private int heapSize;
  // Keys at or after this bound (null = none) never enter the heap: a bounded scan neither merges
  // nor decodes the row just past its range.
  private byte[] upper;
  private final ByteReader reader = new ByteReader();
  private RowState row = new RowState();
  private RowState older = new RowState();
  private byte[] key = new byte[32];
  private int keyLength;
  private long key0;
  private long key1;
  private long key2;
  private boolean valid;
  // Pass-through: the current row kept encoded (a copy of one source's row, or a list folded by
  // copying bytes) until row() asks.
  private boolean passThrough;
  private final ByteWriter encoded = new ByteWriter(256);
  private int encodedSource = -1;
  private boolean pending;
  // Lists folded by copying bytes, when ConcatFold applies to the layout.
  private ConcatFold concatFold;
  // The only source, when there is one: read in place (see the class comment). Its current key
  // and row are noted once per move, so readers of them make no calls through the source's chain
  // of iterators.
  private KvIterator only;
  // Where the only source's current entry lies, filled by one call per row.
  private final KvEntry onlyEntry = new KvEntry();
  private byte[] onlyKey;
  private int onlyKeyOffset;
  private byte[] onlyRow;
  private int onlyRowOffset;
  private int onlyRowLength;
  // The first byte at which the only source's current key is below the upper bound (-1: not
  // known). A next key sharing more bytes than that with it is below the bound too, uncompared.
  private int belowUpperAt = -1;

  /** An iterator over no sources; {@link #reset} it onto some. */
  public RowMergingIterator() {}

  /** {@code names} (same order as sources, entries may be null) label corruption errors. */
  public RowMergingIterator(
      List<KvIterator> sources, List<String> names, ColumnLayout layout, ValueLoader loader) {
    reset(
        sources.toArray(new KvIterator[0]),
        names.toArray(new String[0]),
        sources.size(),
        layout,
        loader);
  }

  /**
   * Merges the first {@code count} of {@code sources} (labelled by {@code names}, entries may be
   * null), unpositioned, reusing this iterator's arrays; the arrays are copied, not kept.
   */
  public RowMergingIterator reset(
      KvIterator[] sources, String[] names, int count, ColumnLayout layout, ValueLoader loader) {
    if (this.sources.length < count) {
      this.sources = new KvIterator[count];
      this.names = new String[count];
      this.heap = new int[count];
      this.keys = new byte[count][];
      this.keyOffsets = new int[count];
      this.keyLengths = new int[count];
      this.prefix = new long[count * WORDS];
    }
    System.arraycopy(sources, 0, this.sources, 0, count);
    System.arraycopy(names, 0, this.names, 0, count);
    this.count = count;
    this.layout = layout;
    this.loader = loader;
    if (ConcatFold.applies(layout)) {
      if (concatFold == null) {
        concatFold = new ConcatFold();
      }
    } else {
      concatFold = null;
    }
    this.heapSize = 0;
    this.valid = false;
    this.upper = null;
    this.only = count == 1 ? this.sources[0] : null;
    this.belowUpperAt = -1;
    return this;
  }

  /**
   * Ends the merge before {@code bound} (null = unbounded): once every source has reached a key at
   * or after it the iterator is no longer {@link #valid}, and rows at or after it are never merged
   * or decoded. Applies from the next seek.
   */
  public RowMergingIterator upperBound(byte[] bound) {
    this.upper = bound;
    return this;
  }

  /** Whether source {@code s}'s current key (loaded) lies before the upper bound. */
  private boolean belowUpper(int s) {
    return upper == null
        || Bytes.compare(keys[s], keyOffsets[s], keyLengths[s], upper, 0, upper.length) < 0;
  }

  private void loadKey(int s) {
    KvIterator source = sources[s];
    byte[] k = source.keyArray();
    int off = source.keyOffset();
    int len = source.keyLength();
    keys[s] = k;
    keyOffsets[s] = off;
    keyLengths[s] = len;
    int at = s * WORDS;
    prefix[at] = word(k, off, len, 0);
    prefix[at + 1] = word(k, off, len, 8);
    prefix[at + 2] = word(k, off, len, 16);
  }

  /** Bytes {@code from} to {@code from + 7} of the key slice, big-endian, zero past its end. */
  private static long word(byte[] k, int off, int len, int from) {
    int left = len - from;
    if (left <= 0) {
      return 0;
    }
    int at = off + from;
    if (at >= 0 && at + 8 <= k.length) {
      long w = (long) LONG_BE.get(k, at);
      // Bytes past the key (its value, the next entry) are masked off.
      return left >= 8 ? w : w & (-1L << (64 - 8 * left));
    }
    long w = 0;
    for (int i = 0; i < 8; i++) {
      w <<= 8;
      if (i < left) {
        w |= k[at + i] & 0xFFL;
      }
    }
    return w;
  }

  /**
   * Orders source {@code s}'s key against the key whose prefix words are {@code w0} to {@code w2}
   * and whose bytes are the given slice, like {@link Bytes#compare}; only the sign is meaningful.
   */
  private int compareTo(int s, long w0, long w1, long w2, byte[] k, int off, int len) {
    int at = s * WORDS;
    int c = Long.compareUnsigned(prefix[at], w0);
    if (c != 0) {
      return c;
    }
    c = Long.compareUnsigned(prefix[at + 1], w1);
    if (c != 0) {
      return c;
    }
    c = Long.compareUnsigned(prefix[at + 2], w2);
    if (c != 0) {
      return c;
    }
    int sLen = keyLengths[s];
    if (sLen <= PREFIX_BYTES && len <= PREFIX_BYTES) {
      // Equal zero-padded prefixes: the shorter key is a prefix of the longer one.
      return Integer.compare(sLen, len);
    }
    return Bytes.compare(keys[s], keyOffsets[s], sLen, k, off, len);
  }

  private boolean less(int a, int b) {
    int at = b * WORDS;
    int c =
        compareTo(
            a, prefix[at], prefix[at + 1], prefix[at + 2], keys[b], keyOffsets[b], keyLengths[b]);
    return c < 0 || (c == 0 && a < b);
  }

  private void siftUp(int i) {
    while (i > 0) {
      int p = (i - 1) / 2;
      if (!less(heap[i], heap[p])) {
        break;
      }
      int t = heap[i];
      heap[i] = heap[p];
      heap[p] = t;
      i = p;
    }
  }

  private void siftDown(int i) {
    while (true) {
      int l = 2 * i + 1;
      int r = l + 1;
      int m = i;
      if (l < heapSize && less(heap[l], heap[m])) {
        m = l;
      }
      if (r < heapSize && less(heap[r], heap[m])) {
        m = r;
      }
      if (m == i) {
        return;
      }
      int t = heap[i];
      heap[i] = heap[m];
      heap[m] = t;
      i = m;
    }
  }

  private void rebuild() {
    heapSize = 0;
    for (int i = 0; i < count; i++) {
      if (sources[i].valid()) {
        loadKey(i);
        if (belowUpper(i)) {
          heap[heapSize++] = i;
          siftUp(heapSize - 1);
        }
      }
    }
    advance();
  }

  public void seekToFirst() {
    for (int i = 0; i < count; i++) {
      sources[i].seekToFirst();
    }
    settle();
  }

  public void seek(byte[] target) {
    for (int i = 0; i < count; i++) {
      sources[i].seek(target);
    }
    settle();
  }

  /** Takes the sources' new positions: the only source's, or the heap rebuilt over all. */
  private void settle() {
    if (only != null) {
      belowUpperAt = -1;
      settleOnly(only.currentInto(onlyEntry));
    } else {
      rebuild();
    }
  }

  /**
   * Takes the only source's position, which {@link #onlyEntry} describes when {@code positioned},
   * as the current row: valid below the upper bound, its row held encoded in place under
   * pass-through (decoded on demand), else decoded now.
   */
  private void settleOnly(boolean positioned) {
    KvEntry e = onlyEntry;
    valid = positioned;
    if (valid) {
      onlyKey = e.keyArray;
      onlyKeyOffset = e.keyOffset;
      keyLength = e.keyLength;
      valid =
          upper == null
              || (belowUpperAt >= 0 && e.sharedWithPrevious > belowUpperAt)
              || onlyBelowUpper();
    }
    if (valid) {
      onlyRow = e.valueArray;
      onlyRowOffset = e.valueOffset;
      onlyRowLength = e.valueLength;
    }
    encodedSource = valid && passThrough ? 0 : -1;
    pending = valid && passThrough;
    if (valid && !passThrough) {
      // Decoded while moving, as a merge without pass-through decodes.
      decode(row, 0);
    }
  }

  /**
   * Compares the only source's current key with the upper bound, noting in {@link #belowUpperAt}
   * the byte that puts it below.
   */
  private boolean onlyBelowUpper() {
    int m = Bytes.mismatch(onlyKey, onlyKeyOffset, keyLength, upper, 0, upper.length);
    belowUpperAt = -1;
    if (m < 0 || m == upper.length) {
      return false;
    }
    if (m == keyLength) {
      // A proper prefix of the bound: below it, but a longer key sharing it may not be.
      return true;
    }
    if ((onlyKey[onlyKeyOffset + m] & 0xFF) < (upper[m] & 0xFF)) {
      belowUpperAt = m;
      return true;
    }
    return false;
  }

  public boolean valid() {
    return valid;
  }

  /** A copy of the current key. */
  public byte[] key() {
    int from = keyOffset();
    return Arrays.copyOfRange(keyArray(), from, from + keyLength());
  }

  /**
   * The current key in place: the {@link #keyLength()} bytes at {@link #keyOffset()}; valid until
   * the next move.
   */
  public byte[] keyArray() {
    return only != null ? onlyKey : key;
  }

  public int keyOffset() {
    return only != null ? onlyKeyOffset : 0;
  }

  public int keyLength() {
    return keyLength;
  }

  /**
   * With {@code on}, a key whose row one source decides is not decoded while moving: the key has no
   * other source, or the newest source's row sets every column with a PUT or DELETE ({@link
   * RowState#replacesOlder}), so the older rows of the key are skipped unread. Such a row is kept
   * as a copy of its encoding ({@link #hasEncodedRow}); {@link #row()} decodes it on demand, so the
   * rows seen are the same either way. Off by default.
   */
  public RowMergingIterator passThrough(boolean on) {
    this.passThrough = on;
    return this;
  }

  /**
   * Whether the current row is held encoded ({@link #encodedRow}): with {@link #passThrough} on,
   * when one source decided the key, or when the key's rows are lists folded by copying their bytes
   * ({@link ConcatFold}). Its decoded form is what {@link #row()} returns.
   */
  public boolean hasEncodedRow() {
    return valid && encodedSource >= 0;
  }

  /**
   * The current row's encoding in place: the {@link #encodedLength()} bytes at {@link
   * #encodedOffset()}; valid until the next move, and only while {@link #hasEncodedRow}.
   */
  public byte[] encodedRow() {
    return only != null ? onlyRow : encoded.array();
  }

  public int encodedOffset() {
    return only != null ? onlyRowOffset : 0;
  }

  public int encodedLength() {
    return only != null ? onlyRowLength : encoded.size();
  }

  /** The combined row at the current key; valid until the next move. */
  public RowState row() {
    if (pending) {
      pending = false;
      if (only != null) {
        decode(row, 0);
      } else {
        decodeCopy();
      }
    }
    return row;
  }

  public void next() {
    if (only != null) {
      settleOnly(only.nextInto(onlyEntry));
    } else {
      advance();
    }
  }

  private void decode(RowState into, int source) {
    KvIterator s = sources[source];
    try {
      into.decode(layout, s.valueArray(), s.valueOffset(), s.valueLength(), reader);
    } catch (CobbleException e) {
      throw e;
    } catch (RuntimeException e) {
      String name = names[source];
      throw new CorruptionException(
          name == null ? "<memtable>" : name, "cannot decode row: " + e.getMessage(), e);
    }
  }

  private void decodeCopy() {
    try {
      row.decode(layout, encoded.array(), 0, encoded.size(), reader);
    } catch (CobbleException e) {
      throw e;
    } catch (RuntimeException e) {
      String name = names[encodedSource];
      throw new CorruptionException(
          name == null ? "<memtable>" : name, "cannot decode row: " + e.getMessage(), e);
    }
  }

  /** Whether the heap entry at {@code i} exists and is positioned on the current key. */
  private boolean atKey(int i) {
    return i < heapSize && compareTo(heap[i], key0, key1, key2, key, 0, keyLength) == 0;
  }

  /** Moves the heap's top source past the current key. */
  private void moveTop() {
    int s = heap[0];
    sources[s].next();
    boolean stays = sources[s].valid();
    if (stays) {
      loadKey(s);
      stays = belowUpper(s);
    }
    if (!stays) {
      heap[0] = heap[--heapSize];
    }
    siftDown(0);
  }

  private void advance() {
    pending = false;
    encodedSource = -1;
    if (heapSize == 0) {
      valid = false;
      return;
    }
    valid = true;
    int top = heap[0];
    // The sources move on below: keep the key in this iterator's own buffer.
    keyLength = keyLengths[top];
    if (key.length < keyLength) {
      key = new byte[Math.max(keyLength, key.length * 2)];
    }
    System.arraycopy(keys[top], keyOffsets[top], key, 0, keyLength);
    key0 = prefix[top * WORDS];
    key1 = prefix[top * WORDS + 1];
    key2 = prefix[top * WORDS + 2];
    if (passThrough) {
      KvIterator s = sources[top];
      // Any other source at this key is a child of the top (ties order by source index).
      boolean alone = !atKey(1) && !atKey(2);
      if (alone
          || RowState.replacesOlder(layout, s.valueArray(), s.valueOffset(), s.valueLength())) {
        encoded.reset();
        encoded.writeBytes(s.valueArray(), s.valueOffset(), s.valueLength());
        encodedSource = top;
        pending = true;
        // The top is at the key (it was just copied from there): move it without comparing.
        do {
          moveTop();
        } while (atKey(0));
        return;
      }
    }
    if (passThrough && concatFold != null && foldConcat(top)) {
      return;
    }
    decode(row, top);
    moveTop();
    while (atKey(0)) {
      decode(older, heap[0]);
      row.mergeOlder(older, loader);
      moveTop();
    }
  }

  /**
   * Folds the rows of the current key, whose newest source is {@code top}, by copying their list
   * bytes ({@link ConcatFold}) into the encoded row; false, with nothing moved, when the newest row
   * is not a list merge. A row it cannot fold continues the general fold from the result so far.
   */
  private boolean foldConcat(int top) {
    KvIterator s = sources[top];
    if (!concatFold.start(layout, s.valueArray(), s.valueOffset(), s.valueLength())) {
      return false;
    }
    moveTop();
    while (atKey(0)) {
      KvIterator o = sources[heap[0]];
      if (!concatFold.addOlder(layout, o.valueArray(), o.valueOffset(), o.valueLength())) {
        encoded.reset();
        concatFold.writeTo(encoded);
        row.decode(layout, encoded.array(), 0, encoded.size(), reader);
        do {
          decode(older, heap[0]);
          row.mergeOlder(older, loader);
          moveTop();
        } while (atKey(0));
        return true;
      }
      moveTop();
    }
    encoded.reset();
    concatFold.writeTo(encoded);
    encodedSource = top;
    pending = true;
    return true;
  }

  @Override
  public void close() {
    for (int i = 0; i < count; i++) {
      sources[i].close();
    }
  }

  /**
   * Forgets the sources without closing them, for their owner, which closes them (a pooled iterator
   * keeps no scan's sources alive).
   */
  public void clear() {
    Arrays.fill(sources, 0, count, null);
    Arrays.fill(names, 0, count, null);
    Arrays.fill(keys, 0, count, null);
    count = 0;
    only = null;
    onlyKey = null;
    onlyRow = null;
    onlyEntry.set(null, 0, 0, 0, null, 0, 0);
    valid = false;
    upper = null;
  }
}
