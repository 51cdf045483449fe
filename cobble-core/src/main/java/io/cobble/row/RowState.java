package io.cobble.row;

import io.cobble.merge.MergeOperator;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import io.cobble.util.Bytes;
import java.util.Arrays;
import java.util.function.LongSupplier;

/**
 * Mutable per-column state of one row at one level of the tree, reused across reads.
 *
 * <p>Each column is ABSENT (this level says nothing), PUT (value, expiry), DELETE, or MERGE
 * (operand, expiry, write time of its oldest operand). A merge includes the older value only if
 * that value was still alive when the merge was written; recording the write time makes this rule
 * give the same answer whenever the fold happens (memtable, flush, compaction or read).
 *
 * <p>Encoding: varint count, then per non-absent column: varint column id, tag byte (kind, plus
 * {@link #POINTER_FLAG} when the value lives in the value log), varlong expiry (PUT/MERGE), varlong
 * write time (MERGE), length-prefixed value (PUT/MERGE).
 */
public final class RowState {
  public static final byte ABSENT = 0;
  public static final byte PUT = 1;
  public static final byte DELETE = 2;
  public static final byte MERGE = 3;
  public static final int POINTER_FLAG = 4;

  private ColumnLayout layout;
  private byte[] kinds = new byte[0];
  private boolean[] pointer = new boolean[0];
  private byte[][] values = new byte[0][];
  private long[] expiry = new long[0];
  private long[] writeTime = new long[0];

  public RowState reset(ColumnLayout layout) {
    this.layout = layout;
    int n = layout.size();
    if (kinds.length < n) {
      kinds = new byte[n];
      pointer = new boolean[n];
      values = new byte[n][];
      expiry = new long[n];
      writeTime = new long[n];
    } else {
      Arrays.fill(kinds, 0, n, ABSENT);
      Arrays.fill(values, 0, n, null);
      Arrays.fill(pointer, 0, n, false);
    }
    return this;
  }

  public ColumnLayout layout() {
    return layout;
  }

  public int size() {
    return layout.size();
  }

  public byte kind(int i) {
    return kinds[i];
  }

  public byte[] value(int i) {
    return values[i];
  }

  public boolean isPointer(int i) {
    return pointer[i];
  }

  public long expiry(int i) {
    return expiry[i];
  }

  public long writeTime(int i) {
    return writeTime[i];
  }

  public void set(int i, byte kind, byte[] value, boolean isPointer, long exp, long wt) {
    kinds[i] = kind;
    values[i] = value;
    pointer[i] = isPointer;
    expiry[i] = exp;
    writeTime[i] = wt;
  }

  public void setPointer(int i, byte[] ptr) {
    values[i] = ptr;
    pointer[i] = true;
  }

  public void clear(int i) {
    kinds[i] = ABSENT;
    values[i] = null;
    pointer[i] = false;
  }

  public boolean isEmpty() {
    for (int i = 0; i < layout.size(); i++) {
      if (kinds[i] != ABSENT) {
        return false;
      }
    }
    return true;
  }

  /** True when no older level can change the given columns (all PUT or DELETE). */
  public boolean isFinal(int[] projection) {
    if (projection == null) {
      for (int i = 0; i < layout.size(); i++) {
        if (kinds[i] != PUT && kinds[i] != DELETE) {
          return false;
        }
      }
      return true;
    }
    for (int i : projection) {
      if (kinds[i] != PUT && kinds[i] != DELETE) {
        return false;
      }
    }
    return true;
  }

  static boolean alive(long expiry, long at) {
    return expiry == 0 || expiry > at;
  }

  /** Decodes a persisted row; columns dropped since it was written are ignored. */
  public RowState decode(ColumnLayout layout, byte[] buf, int off, int len, ByteReader r) {
    reset(layout);
    r.reset(buf, off, len);
    int n = r.readVarInt();
    for (int k = 0; k < n; k++) {
      int id = r.readVarInt();
      int tag = r.readByte();
      byte kind = (byte) (tag & 3);
      long exp = 0;
      long wt = 0;
      byte[] v = null;
      if (kind == PUT || kind == MERGE) {
        exp = r.readVarLong();
        if (kind == MERGE) {
          wt = r.readVarLong();
        }
        v = r.readLengthPrefixed();
      } else if (kind != DELETE) {
        throw new IllegalStateException("bad column tag " + tag);
      }
      int pos = layout.position(id);
      if (pos >= 0) {
        set(pos, kind, v, (tag & POINTER_FLAG) != 0, exp, wt);
      }
    }
    if (r.hasRemaining()) {
      throw new IllegalStateException("trailing bytes in row");
    }
    return this;
  }

  /**
   * Whether an encoded row has a column of {@code layout} written by a plain put that is alive at
   * {@code now} (asked only for a put that expires) and whose merge operator, if any, does not
   * expire elements: the same answer as checking {@link #kind}, {@link #expiry} and the operator
   * after a {@link #decode}, read in place without copying any value. Throws as {@link #decode}
   * does on a malformed row.
   */
  public static boolean hasLivePut(
      ColumnLayout layout, byte[] buf, int off, int len, ByteReader r, LongSupplier now) {
    r.reset(buf, off, len);
    int n = r.readVarInt();
    boolean live = false;
    for (int k = 0; k < n; k++) {
      int id = r.readVarInt();
      int tag = r.readByte();
      byte kind = (byte) (tag & 3);
      if (kind == DELETE) {
        continue;
      }
      if (kind != PUT && kind != MERGE) {
        throw new IllegalStateException("bad column tag " + tag);
      }
      long exp = r.readVarLong();
      if (kind == MERGE) {
        r.readVarLong();
      }
      r.skip(r.readVarInt());
      int pos = layout.position(id);
      if (!live && kind == PUT && pos >= 0) {
        MergeOperator op = layout.operator(pos);
        live = (op == null || !op.elementTtl()) && (exp == 0 || exp > now.getAsLong());
      }
    }
    if (r.hasRemaining()) {
      throw new IllegalStateException("trailing bytes in row");
    }
    return live;
  }

  /**
   * Whether an encoded row delta sets every column of the layout (PUT or DELETE, no MERGE), so that
   * nothing of an older row of the same key survives it: the same answer as {@link #isFinal} after
   * a {@link #decode}, read without decoding or allocating. Memtables use it to skip superseded
   * deltas of a key instead of folding them.
   */
  public static boolean replacesOlder(ColumnLayout layout, byte[] buf, int off, int len) {
    int end = off + len;
    int pos = varintEnd(buf, off, end);
    if (pos > end || varint(buf, off) < layout.size()) {
      return false;
    }
    long n = varint(buf, off);
    int covered = 0;
    for (long k = 0; k < n; k++) {
      int idEnd = varintEnd(buf, pos, end);
      if (idEnd >= end) {
        return false;
      }
      long id = varint(buf, pos);
      int kind = buf[idEnd] & 3;
      pos = idEnd + 1;
      if (kind == PUT) {
        pos = varintEnd(buf, pos, end);
        int lengthEnd = varintEnd(buf, pos, end);
        long valueLen = lengthEnd > end ? -1 : varint(buf, pos);
        if (valueLen < 0 || valueLen > end - lengthEnd) {
          return false;
        }
        pos = lengthEnd + (int) valueLen;
      } else if (kind != DELETE) {
        return false;
      }
      if (id <= Integer.MAX_VALUE && layout.position((int) id) >= 0) {
        covered++;
      }
    }
    return pos == end && covered == layout.size();
  }

  /** What {@link #inlinePut} returns when the value cannot be read in place. */
  public static final long NOT_INLINE = -1L;

  /**
   * Where the value of column position {@code position} lies in an encoded row when the row holds
   * it as a PUT that readers see exactly as stored: inline (not in the value log), without expiry,
   * in a column whose merge operator (if any) drops no expired elements. Such a PUT is final, as
   * {@link #isFinal} says after a {@link #decode}. Returns {@code valueOffset << 32 | valueLength}
   * (the offset into {@code buf}), or {@link #NOT_INLINE} for anything else (absent, deleted,
   * merged, expiring, in the value log), which readers then decode. Reads without allocating.
   */
  public static long inlinePut(ColumnLayout layout, byte[] buf, int off, int len, int position) {
    MergeOperator op = layout.operator(position);
    if (op != null && op.elementTtl()) {
      return NOT_INLINE;
    }
    long wanted = layout.id(position);
    int end = off + len;
    int pos = varintEnd(buf, off, end);
    if (pos > end) {
      return NOT_INLINE;
    }
    long n = varint(buf, off);
    for (long k = 0; k < n; k++) {
      int idEnd = varintEnd(buf, pos, end);
      if (idEnd >= end) {
        return NOT_INLINE;
      }
      long id = varint(buf, pos);
      int tag = buf[idEnd];
      int kind = tag & 3;
      pos = idEnd + 1;
      if (kind == DELETE) {
        if (id == wanted) {
          return NOT_INLINE;
        }
        continue;
      }
      if (kind != PUT && kind != MERGE) {
        return NOT_INLINE;
      }
      int expiryEnd = varintEnd(buf, pos, end);
      int writeTimeEnd = kind == MERGE ? varintEnd(buf, expiryEnd, end) : expiryEnd;
      int lengthEnd = varintEnd(buf, writeTimeEnd, end);
      if (lengthEnd > end) {
        return NOT_INLINE;
      }
      long valueLength = varint(buf, writeTimeEnd);
      if (valueLength < 0 || valueLength > end - lengthEnd) {
        return NOT_INLINE;
      }
      if (id == wanted) {
        return tag == PUT && varint(buf, pos) == 0
            ? (long) lengthEnd << 32 | valueLength
            : NOT_INLINE;
      }
      pos = lengthEnd + (int) valueLength;
    }
    return NOT_INLINE;
  }

  /**
   * As {@link #inlinePut} for every column position of {@code positions} at once: true when the row
   * holds each of them as such a PUT, with {@code spans[i]} set to where the value of {@code
   * positions[i]} lies ({@code valueOffset << 32 | valueLength}); false as soon as one of them is
   * anything else. One pass over the row, without allocating.
   *
   * @param spans at least {@code positions.length} long
   */
  public static boolean inlinePuts(
      ColumnLayout layout, byte[] buf, int off, int len, int[] positions, long[] spans) {
    if (positions.length == 1 && len > 4) {
      long span = firstColumnInlinePut(layout, positions[0], buf, off, len);
      if (span != NOT_INLINE) {
        spans[0] = span;
        return true;
      }
    }
    for (int i = 0; i < positions.length; i++) {
      MergeOperator op = layout.operator(positions[i]);
      if (op != null && op.elementTtl()) {
        return false;
      }
      spans[i] = NOT_INLINE;
    }
    int end = off + len;
    int pos = varintEnd(buf, off, end);
    if (pos > end) {
      return false;
    }
    long n = varint(buf, off);
    int missing = positions.length;
    for (long k = 0; k < n && missing > 0; k++) {
      int idEnd = varintEnd(buf, pos, end);
      if (idEnd >= end) {
        return false;
      }
      long id = varint(buf, pos);
      int tag = buf[idEnd];
      int kind = tag & 3;
      pos = idEnd + 1;
      int wanted = indexOfId(layout, positions, id);
      if (kind == DELETE) {
        if (wanted >= 0) {
          return false;
        }
        continue;
      }
      if (kind != PUT && kind != MERGE) {
        return false;
      }
      int expiryEnd = varintEnd(buf, pos, end);
      int writeTimeEnd = kind == MERGE ? varintEnd(buf, expiryEnd, end) : expiryEnd;
      int lengthEnd = varintEnd(buf, writeTimeEnd, end);
      if (lengthEnd > end) {
        return false;
      }
      long valueLength = varint(buf, writeTimeEnd);
      if (valueLength < 0 || valueLength > end - lengthEnd) {
        return false;
      }
      if (wanted >= 0) {
        if (tag != PUT || varint(buf, pos) != 0 || spans[wanted] != NOT_INLINE) {
          return false;
        }
        spans[wanted] = (long) lengthEnd << 32 | valueLength;
        missing--;
      }
      pos = lengthEnd + (int) valueLength;
    }
    return missing == 0;
  }

  /**
   * The span of column {@code position}'s value when the row (at least five bytes) starts with it
   * as a plain PUT of fewer than 128 bytes with one-byte varints, the usual single-column row: its
   * first five bytes are then the column count, the id, the tag, a zero expiry and the length, read
   * by one int load and one byte. {@link #NOT_INLINE} for any other row, which the general pass
   * then reads.
   */
  private static long firstColumnInlinePut(
      ColumnLayout layout, int position, byte[] buf, int off, int len) {
    int id = layout.id(position);
    MergeOperator op = layout.operator(position);
    if (id >= 0x80 || (op != null && op.elementTtl())) {
      return NOT_INLINE;
    }
    int h = Bytes.getInt(buf, off);
    int count = h >>> 24;
    int valueLength = buf[off + 4];
    if (count == 0
        || count >= 0x80
        || (h & 0xFFFFFF) != (id << 16 | PUT << 8)
        || valueLength < 0
        || valueLength > len - 5) {
      return NOT_INLINE;
    }
    return (long) (off + 5) << 32 | valueLength;
  }

  private static int indexOfId(ColumnLayout layout, int[] positions, long id) {
    for (int i = 0; i < positions.length; i++) {
      if (layout.id(positions[i]) == id) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Writes to {@code out} the row {@link #resolveBottom} and {@link #encode} would make of an
   * encoded row whose MERGE columns have no default: each MERGE becomes a PUT of the same bytes,
   * without its write time. False, with {@code out} undefined, for a row with a value-log pointer,
   * a column no longer in the layout or one with a default, or malformed bytes.
   */
  public static boolean mergesToPuts(
      ColumnLayout layout, byte[] buf, int off, int len, ByteWriter out) {
    int end = off + len;
    int pos = varintEnd(buf, off, end);
    if (pos > end) {
      return false;
    }
    long n = varint(buf, off);
    out.reset();
    out.writeBytes(buf, off, pos - off);
    for (long k = 0; k < n; k++) {
      int idEnd = varintEnd(buf, pos, end);
      if (idEnd >= end) {
        return false;
      }
      long id = varint(buf, pos);
      int position = id >= 0 && id <= Integer.MAX_VALUE ? layout.position((int) id) : -1;
      int tag = buf[idEnd];
      if (position < 0 || tag < PUT || tag > MERGE) {
        return false;
      }
      out.writeBytes(buf, pos, idEnd - pos);
      pos = idEnd + 1;
      if (tag == DELETE) {
        out.writeByte(DELETE);
        continue;
      }
      if (tag == MERGE && layout.storedDefault(position) != null) {
        return false;
      }
      int expiryEnd = varintEnd(buf, pos, end);
      int writeTimeEnd = tag == MERGE ? varintEnd(buf, expiryEnd, end) : expiryEnd;
      int lengthEnd = varintEnd(buf, writeTimeEnd, end);
      if (lengthEnd > end) {
        return false;
      }
      long valueLength = varint(buf, writeTimeEnd);
      if (valueLength < 0 || valueLength > end - lengthEnd) {
        return false;
      }
      out.writeByte(PUT);
      out.writeBytes(buf, pos, expiryEnd - pos);
      out.writeBytes(buf, writeTimeEnd, lengthEnd + (int) valueLength - writeTimeEnd);
      pos = lengthEnd + (int) valueLength;
    }
    return pos == end;
  }

  /** The position after the varint at {@code pos}, or {@code end + 1} when it is cut off. */
  static int varintEnd(byte[] buf, int pos, int end) {
    for (int i = pos; i < end && i < pos + 10; i++) {
      if (buf[i] >= 0) {
        return i + 1;
      }
    }
    return end + 1;
  }

  /** The varint at {@code pos}, which {@link #varintEnd} found complete. */
  static long varint(byte[] buf, int pos) {
    long result = 0;
    for (int shift = 0; ; shift += 7) {
      int b = buf[pos++];
      result |= (long) (b & 0x7F) << shift;
      if (b >= 0) {
        return result;
      }
    }
  }

  public RowState decode(ColumnLayout layout, byte[] row) {
    return decode(layout, row, 0, row.length, new ByteReader());
  }

  public void encode(ByteWriter w) {
    int n = 0;
    for (int i = 0; i < layout.size(); i++) {
      if (kinds[i] != ABSENT) {
        n++;
      }
    }
    w.writeVarInt(n);
    for (int i = 0; i < layout.size(); i++) {
      byte kind = kinds[i];
      if (kind == ABSENT) {
        continue;
      }
      w.writeVarInt(layout.id(i));
      w.writeByte(kind | (pointer[i] ? POINTER_FLAG : 0));
      if (kind == PUT || kind == MERGE) {
        w.writeVarLong(expiry[i]);
        if (kind == MERGE) {
          w.writeVarLong(writeTime[i]);
        }
        w.writeLengthPrefixed(values[i]);
      }
    }
  }

  public byte[] encode() {
    ByteWriter w = new ByteWriter(64);
    encode(w);
    return w.toByteArray();
  }

  private byte[] loaded(int i, ValueLoader loader) {
    if (pointer[i]) {
      values[i] = loader.load(values[i]);
      pointer[i] = false;
    }
    return values[i];
  }

  private byte[] mergeOnNothing(int i, byte[] operand) {
    byte[] def = layout.storedDefault(i);
    return def == null ? operand : layout.operator(i).merge(def, operand);
  }

  /** Folds an older level under this (newer) one, column by column. */
  public void mergeOlder(RowState older, ValueLoader loader) {
    for (int i = 0; i < layout.size(); i++) {
      byte kind = kinds[i];
      if (kind == PUT || kind == DELETE) {
        continue;
      }
      byte ok = older.kinds[i];
      if (kind == ABSENT) {
        if (ok != ABSENT) {
          set(i, ok, older.values[i], older.pointer[i], older.expiry[i], older.writeTime[i]);
        }
        continue;
      }
      MergeOperator op = layout.operator(i);
      long wt = writeTime[i];
      switch (ok) {
        case ABSENT:
          break;
        case DELETE:
          set(i, PUT, mergeOnNothing(i, loaded(i, loader)), false, expiry[i], 0);
          break;
        case PUT:
          if (alive(older.expiry[i], wt)) {
            byte[] base = older.loaded(i, loader);
            set(i, PUT, op.merge(base, loaded(i, loader)), false, expiry[i], 0);
          } else {
            set(i, PUT, mergeOnNothing(i, loaded(i, loader)), false, expiry[i], 0);
          }
          break;
        default:
          if (alive(older.expiry[i], wt)) {
            byte[] base = older.loaded(i, loader);
            set(i, MERGE, op.merge(base, loaded(i, loader)), false, expiry[i], older.writeTime[i]);
          } else {
            set(i, PUT, mergeOnNothing(i, loaded(i, loader)), false, expiry[i], 0);
          }
          break;
      }
    }
  }

  /** Called when nothing older exists: merges become puts over the column default. */
  public void resolveBottom(ValueLoader loader) {
    for (int i = 0; i < layout.size(); i++) {
      if (kinds[i] == MERGE) {
        set(i, PUT, mergeOnNothing(i, loaded(i, loader)), false, expiry[i], 0);
      }
    }
  }

  /**
   * Whether what {@link #toUser} or {@link #toUserColumn} return for the projected positions (null
   * = all columns) depends on {@code now}: a column has an expiry, or its merge operator drops
   * expired elements. When not, readers need not read the clock (a call of tens of ns on VMs).
   */
  public boolean readsClock(int[] projection) {
    int n = projection == null ? layout.size() : projection.length;
    for (int k = 0; k < n; k++) {
      int i = projection == null ? k : projection[k];
      if (expiry[i] != 0) {
        return true;
      }
      MergeOperator op = layout.operator(i);
      if (op != null && op.elementTtl()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Values readers see at {@code now} for the projected positions (null = all columns), or null
   * when none of them has a live value. Projected columns without a value get their default.
   */
  public byte[][] toUser(int[] projection, long now, ValueLoader loader) {
    int n = projection == null ? layout.size() : projection.length;
    byte[][] out = new byte[n][];
    boolean any = false;
    for (int k = 0; k < n; k++) {
      int i = projection == null ? k : projection[k];
      byte kind = kinds[i];
      if ((kind == PUT || kind == MERGE) && alive(expiry[i], now)) {
        byte[] v = loaded(i, loader);
        if (kind == MERGE) {
          v = mergeOnNothing(i, v);
        }
        MergeOperator op = layout.operator(i);
        if (op != null && op.elementTtl()) {
          v = op.toUser(v, now);
          if (v.length == 0) {
            continue;
          }
        }
        out[k] = v;
        any = true;
      }
    }
    if (!any) {
      return null;
    }
    for (int k = 0; k < n; k++) {
      if (out[k] == null) {
        out[k] = layout.userDefault(projection == null ? k : projection[k]);
      }
    }
    return out;
  }

  /**
   * The value readers see at {@code now} in column {@code i}, or null when it has none: {@link
   * #toUser} with a projection of {@code i}, without the array around it.
   */
  public byte[] toUserColumn(int i, long now, ValueLoader loader) {
    byte kind = kinds[i];
    if ((kind != PUT && kind != MERGE) || !alive(expiry[i], now)) {
      return null;
    }
    byte[] v = loaded(i, loader);
    if (kind == MERGE) {
      v = mergeOnNothing(i, v);
    }
    MergeOperator op = layout.operator(i);
    if (op != null && op.elementTtl()) {
      v = op.toUser(v, now);
      if (v.length == 0) {
        return null;
      }
    }
    return v;
  }

  /** Latest expiry among live values, 0 if some value never expires, -1 if none has a value. */
  public long maxExpiry() {
    long max = -1;
    for (int i = 0; i < layout.size(); i++) {
      if (kinds[i] == PUT || kinds[i] == MERGE) {
        if (expiry[i] == 0) {
          return 0;
        }
        max = Math.max(max, expiry[i]);
      }
    }
    return max;
  }
}
