package io.cobble.memtable;

import io.cobble.util.Bytes;
import io.cobble.util.ValueSink;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Append-only storage of memtable records in large byte pages (growing from 16 KiB to {@link
 * ArenaPageSize}, about 1 MiB, or one G1 region). A record is addressed by a long ({@code page <<
 * 32 | offset}); indexes hold these longs instead of objects so the GC sees a handful of big arrays
 * regardless of entry count. Record layout: key length (4), value length (4), key, value, and for a
 * record that replaces an older version of its key ({@link #add(byte[], int, byte[], int, int,
 * long)}) that version's address (8), flagged by the value length's top bit.
 *
 * <p>Addresses grow in append order (a later record lies on a later page, or further into the same
 * one), so an address doubles as the record's sequence number: a reader that noted the newest
 * address at some moment tells every record appended after that moment by its address alone.
 *
 * <p>One thread appends; any thread reads a record whose address it obtained through the memtable's
 * release/acquire publication (see {@link MemTable}). Bytes of a published record never change, and
 * the page directory is replaced (never shrunk) through a volatile field, so a reader holding a
 * published address always finds its page.
 */
final class Arena {
  static final int MAX_PAGE_SIZE = ArenaPageSize.ofThisJvm();
  private static final int FIRST_PAGE_SIZE = 16 << 10;

  /**
   * A flag an index may set in a record's address (bit 31 of the offset, which a page offset never
   * uses); the arena ignores it when it reads the record.
   */
  static final long REPLACES_OLDER = 1L << 31;

  /** An address no record has: no older version, or nothing appended yet. */
  static final long NONE = -1L;

  /** Value-length bit of a record that ends with its older version's address. */
  private static final int HAS_OLDER = 1 << 31;

  /** Key bytes held in a normalized key; the sixteenth byte holds the clipped key length. */
  static final int NORMALIZED_BYTES = 15;

  private static final VarHandle USED;
  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  static {
    try {
      USED = MethodHandles.lookup().findVarHandle(Arena.class, "used", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile byte[][] pages = new byte[4][];
  private int pageCount;
  private int pageUsed;
  private int nextPageSize = FIRST_PAGE_SIZE;
  // Written by the appender only; read (approximately, but never torn) by any thread.
  private long used;

  long add(byte[] key, int keyLen, byte[] value, int valueOff, int valueLen) {
    return add(key, keyLen, value, valueOff, valueLen, NONE);
  }

  /**
   * Appends a new version of a key whose previous version is the record at {@code older} ({@link
   * #NONE} for none), which stays reachable through {@link #older} for readers of an earlier
   * moment.
   */
  long add(byte[] key, int keyLen, byte[] value, int valueOff, int valueLen, long older) {
    int size = 8 + keyLen + valueLen + (older == NONE ? 0 : 8);
    if (pageCount == 0 || pageUsed + size > pages[pageCount - 1].length) {
      newPage(Math.max(nextPageSize, size));
      nextPageSize = Math.min(MAX_PAGE_SIZE, nextPageSize * 2);
    }
    byte[] page = pages[pageCount - 1];
    int off = pageUsed;
    Bytes.putInt(page, off, keyLen);
    Bytes.putInt(page, off + 4, older == NONE ? valueLen : valueLen | HAS_OLDER);
    System.arraycopy(key, 0, page, off + 8, keyLen);
    System.arraycopy(value, valueOff, page, off + 8 + keyLen, valueLen);
    if (older != NONE) {
      Bytes.putLong(page, off + 8 + keyLen + valueLen, older);
    }
    pageUsed += size;
    USED.setOpaque(this, (long) USED.getOpaque(this) + size);
    return ((long) (pageCount - 1) << 32) | off;
  }

  private static int offset(long addr) {
    return (int) (addr & ~REPLACES_OLDER);
  }

  private void newPage(int size) {
    byte[][] p = pages;
    if (pageCount == p.length) {
      p = Arrays.copyOf(p, p.length * 2);
      pages = p;
    }
    p[pageCount++] = new byte[size];
    pageUsed = 0;
  }

  /** Bytes of records stored; pages grow geometrically so slack stays small. */
  long usedBytes() {
    return (long) USED.getOpaque(this);
  }

  int compareKey(long addr, byte[] key, int keyLen) {
    byte[] page = pages[(int) (addr >>> 32)];
    int off = offset(addr);
    return Bytes.compare(page, off + 8, Bytes.getInt(page, off), key, 0, keyLen);
  }

  int compareKeys(long a, long b) {
    byte[] pa = pages[(int) (a >>> 32)];
    int oa = offset(a);
    byte[] pb = pages[(int) (b >>> 32)];
    int ob = offset(b);
    return Bytes.compare(pa, oa + 8, Bytes.getInt(pa, oa), pb, ob + 8, Bytes.getInt(pb, ob));
  }

  /**
   * Writes the key's normalized form into {@code dst[at]} and {@code dst[at + 1]}: its first {@link
   * #NORMALIZED_BYTES} bytes big-endian, zero-padded, then {@code min(key length, 15)} in the last
   * byte. Compared as two unsigned longs it orders like {@link Bytes#compare} except that keys
   * which both have at least 15 bytes and share the first 15 tie; equal forms with a last byte
   * below 15 mean equal keys.
   */
  void normalizedKey(long addr, long[] dst, int at) {
    byte[] page = pages[(int) (addr >>> 32)];
    int off = offset(addr);
    int len = Bytes.getInt(page, off);
    dst[at] = normalizedHigh(page, off + 8, len);
    dst[at + 1] = normalizedLow(page, off + 8, len);
  }

  /**
   * The first word of the normalized form ({@link #normalizedKey}) of the {@code len}-byte key at
   * {@code b[start]}: its first eight bytes, big-endian, zero-padded.
   */
  static long normalizedHigh(byte[] b, int start, int len) {
    if (len >= 8 && start + 8 <= b.length) {
      return (long) LONG_BE.get(b, start);
    }
    long w = 0;
    for (int i = 0; i < Math.min(len, 8); i++) {
      w |= (b[start + i] & 0xFFL) << (56 - 8 * i);
    }
    return w;
  }

  /**
   * The second word of the normalized form ({@link #normalizedKey}) of the {@code len}-byte key at
   * {@code b[start]}: its bytes 8 to 14, zero-padded, then {@code min(len, 15)}.
   */
  static long normalizedLow(byte[] b, int start, int len) {
    int n = Math.min(len, NORMALIZED_BYTES);
    if (len >= NORMALIZED_BYTES && start + 16 <= b.length) {
      return ((long) LONG_BE.get(b, start + 8) & ~0xFFL) | n;
    }
    long w = 0;
    for (int i = 8; i < n; i++) {
      w |= (b[start + i] & 0xFFL) << (120 - 8 * i);
    }
    return w | n;
  }

  /** {@link Bytes#hash} of the record's key, read in place. */
  int hashKey(long addr) {
    byte[] page = pages[(int) (addr >>> 32)];
    int off = offset(addr);
    return Bytes.hash(page, off + 8, Bytes.getInt(page, off));
  }

  /** Adds the record's key, read in place, to {@code shape}. */
  void addKeyTo(long addr, KeyShape shape) {
    byte[] page = pages[(int) (addr >>> 32)];
    int off = offset(addr);
    shape.add(page, off + 8, Bytes.getInt(page, off));
  }

  /**
   * Writes the key's first {@code maxWords * 8} bytes into {@code dst[at]} to {@code dst[at +
   * maxWords - 1]} as big-endian words, zero-padded past its end, and returns its full length.
   */
  int keyWords(long addr, long[] dst, int at, int maxWords) {
    byte[] page = pages[(int) (addr >>> 32)];
    int off = offset(addr);
    int len = Bytes.getInt(page, off);
    int start = off + 8;
    int n = Math.min(len, maxWords * 8);
    int full = n >>> 3;
    for (int w = 0; w < full; w++) {
      dst[at + w] = (long) LONG_BE.get(page, start + 8 * w);
    }
    int w = full;
    if ((n & 7) != 0) {
      int tail = start + 8 * full;
      long last = 0;
      if (tail + 8 <= page.length) {
        // The bytes after the key (its value, or the next record) are read and masked off.
        last = (long) LONG_BE.get(page, tail) & (-1L << (64 - 8 * (n & 7)));
      } else {
        for (int i = full * 8; i < n; i++) {
          last |= (page[start + i] & 0xFFL) << (56 - 8 * (i & 7));
        }
      }
      dst[at + w++] = last;
    }
    for (; w < maxWords; w++) {
      dst[at + w] = 0;
    }
    return len;
  }

  byte[] key(long addr) {
    byte[] page = pages[(int) (addr >>> 32)];
    int off = offset(addr);
    int len = Bytes.getInt(page, off);
    return Arrays.copyOfRange(page, off + 8, off + 8 + len);
  }

  /**
   * Reads a byte of each of the first three cache lines of the records at {@code addrs[from..to)}
   * (lines past a record's page end are skipped) and returns their sum, which the caller must keep:
   * loads whose result is dropped may be dropped themselves.
   */
  int touch(long[] addrs, int from, int to) {
    byte[][] p = pages;
    int sum = 0;
    for (int i = from; i < to; i++) {
      long addr = addrs[i];
      byte[] page = p[(int) (addr >>> 32)];
      int off = offset(addr);
      int last = page.length - 1;
      sum += page[off] + page[Math.min(off + 64, last)] + page[Math.min(off + 128, last)];
    }
    return sum;
  }

  /** Hands the record's key and value to {@code visitor} in place. */
  void recordTo(long addr, MemTable.RowVisitor visitor) {
    byte[] page = pages[(int) (addr >>> 32)];
    int off = offset(addr);
    int klen = Bytes.getInt(page, off);
    int vlen = Bytes.getInt(page, off + 4) & ~HAS_OLDER;
    visitor.accept(page, off + 8, klen, page, off + 8 + klen, vlen);
  }

  /** Hands the record's key in place and {@code row} (its combined row) to {@code visitor}. */
  void recordTo(long addr, byte[] row, MemTable.RowVisitor visitor) {
    byte[] page = pages[(int) (addr >>> 32)];
    int off = offset(addr);
    visitor.accept(page, off + 8, Bytes.getInt(page, off), row, 0, row.length);
  }

  /** Hands the record's value to {@code sink} in place. */
  void valueTo(long addr, ValueSink sink) {
    byte[] page = pages[(int) (addr >>> 32)];
    int off = offset(addr);
    int klen = Bytes.getInt(page, off);
    int vlen = Bytes.getInt(page, off + 4) & ~HAS_OLDER;
    sink.accept(page, off + 8 + klen, vlen);
  }

  byte[] value(long addr) {
    byte[] page = pages[(int) (addr >>> 32)];
    int off = offset(addr);
    int klen = Bytes.getInt(page, off);
    int vlen = Bytes.getInt(page, off + 4) & ~HAS_OLDER;
    int start = off + 8 + klen;
    return Arrays.copyOfRange(page, start, start + vlen);
  }

  /** The address of the version this record replaced, or {@link #NONE}. */
  long older(long addr) {
    byte[] page = pages[(int) (addr >>> 32)];
    int off = offset(addr);
    int vlen = Bytes.getInt(page, off + 4);
    if ((vlen & HAS_OLDER) == 0) {
      return NONE;
    }
    return Bytes.getLong(page, off + 8 + Bytes.getInt(page, off) + (vlen & ~HAS_OLDER));
  }
}
