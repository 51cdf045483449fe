package io.cobble.reader;

import io.cobble.sst.BloomFilter;
import io.cobble.util.ColumnsSink;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;

/**
 * Results of projected point reads on frozen snapshots, kept as bytes so a repeated read of the
 * same key answers without the filter, index and block search: the values a read handed over, or
 * that the key has none. Nothing a reader reads ever changes under it (each {@link ReadOnlyDb} is a
 * frozen snapshot, and each of its projections has its own {@link #newOwner owner id}), so an entry
 * never goes stale; one leaves only by eviction.
 *
 * <p>Each of the stripes is a ring of bytes written in order (the oldest entries are overwritten:
 * first in, first out) plus a set-associative index of {@code long} slots (a 16-bit hash tag and
 * the entry's position in the ring). A slot whose entry was overwritten is recognized by its
 * position and reused; a tag match is confirmed by comparing owner, bucket and key, so a hash
 * collision never answers with another key's row. No object per entry, and a read allocates
 * nothing. Reads of results that depend on the time of the read (values that expire) are not kept.
 */
public final class RowCache {
  /** {@link #read} results. */
  public static final int FOUND = 1;

  public static final int ABSENT = 0;
  public static final int NOT_CACHED = -1;

  private static final int MAX_STRIPES = 16;
  private static final int MIN_STRIPE_BYTES = 64 << 10;
  private static final int WAYS = 8;
  // Entry header: owner (8), bucket (4), key length (4), payload length (4; -1 = no row).
  private static final int HEADER = 20;
  // Payload: per value, its projection index (2) and length (4), then the bytes.
  private static final int VALUE_HEADER = 6;
  private static final long POSITION_MASK = (1L << 48) - 1;
  private static final VarHandle INT =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private final Stripe[] stripes;
  private final long capacity;
  private final AtomicLong owners = new AtomicLong(1);
  private final ThreadLocal<Recorder> recorders = ThreadLocal.withInitial(Recorder::new);

  /** A cache of about {@code capacityBytes} (ring and index together), allocated as it fills. */
  public RowCache(long capacityBytes) {
    int n =
        (int)
            Math.min(
                MAX_STRIPES, Long.highestOneBit(Math.max(1, capacityBytes / MIN_STRIPE_BYTES)));
    long perStripe = Math.min(capacityBytes / n, (long) Integer.MAX_VALUE);
    stripes = new Stripe[n];
    for (int i = 0; i < n; i++) {
      stripes[i] = new Stripe(perStripe);
    }
    capacity = perStripe * n;
  }

  /** A fresh id for the results of one projection of one snapshot. */
  public long newOwner() {
    return owners.getAndIncrement();
  }

  /**
   * Hands the cached values of {@code key} to {@code sink} and returns {@link #FOUND}, returns
   * {@link #ABSENT} when the key is cached as having none, or {@link #NOT_CACHED}.
   */
  public int read(long owner, int bucket, byte[] key, ColumnsSink sink) {
    long h = hash(owner, bucket, key);
    return stripe(h).read(h, owner, bucket, key, sink);
  }

  /**
   * The calling thread's recorder, reset to pass values on to {@code sink} and remember them for
   * {@link #put}.
   */
  public Recorder recorder(ColumnsSink sink) {
    Recorder r = recorders.get();
    r.start(sink);
    return r;
  }

  /**
   * Keeps what {@code read} recorded as the result of reading {@code key} ({@code found}: whether
   * the read found values), unless the result depends on the time of the read.
   */
  public void put(long owner, int bucket, byte[] key, Recorder read, boolean found) {
    if (read.unkept) {
      return;
    }
    long h = hash(owner, bucket, key);
    stripe(h).put(h, owner, bucket, key, found ? read.buf : null, found ? read.size : -1);
  }

  public long hits() {
    return sum(s -> s.hits);
  }

  public long misses() {
    return sum(s -> s.misses);
  }

  /** Bytes allocated so far (ring and index; they grow to the capacity as entries come in). */
  public long usage() {
    return sum(Stripe::usage);
  }

  private long sum(ToLongFunction<Stripe> field) {
    long n = 0;
    for (Stripe s : stripes) {
      synchronized (s) {
        n += field.applyAsLong(s);
      }
    }
    return n;
  }

  public long capacity() {
    return capacity;
  }

  private Stripe stripe(long h) {
    return stripes[(int) (h >>> 60) & (stripes.length - 1)];
  }

  static long hash(long owner, int bucket, byte[] key) {
    long h = BloomFilter.hash(key) + owner * 0x9E3779B97F4A7C15L + bucket * 0xC2B2AE3D27D4EB4FL;
    h = (h ^ (h >>> 33)) * 0xff51afd7ed558ccdL;
    h = (h ^ (h >>> 33)) * 0xc4ceb9fe1a85ec53L;
    return h ^ (h >>> 33);
  }

  /**
   * Passes a read's values on to its sink and copies them into a buffer the thread reuses, so a
   * miss can be kept without allocating per read.
   */
  public static final class Recorder implements ColumnsSink {
    private ColumnsSink sink;
    private byte[] buf = new byte[256];
    private int size;
    // Set when the result must not be kept: it expires, or an index does not fit the payload.
    private boolean unkept;

    void start(ColumnsSink target) {
      sink = target;
      size = 0;
      unkept = false;
    }

    @Override
    public void accept(int index, byte[] value, int off, int len) {
      if (index > 0xFFFF) {
        unkept = true;
      }
      int need = size + VALUE_HEADER + len;
      if (need > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(need, buf.length * 2));
      }
      buf[size] = (byte) (index >>> 8);
      buf[size + 1] = (byte) index;
      INT.set(buf, size + 2, len);
      System.arraycopy(value, off, buf, size + VALUE_HEADER, len);
      size = need;
      sink.accept(index, value, off, len);
    }

    @Override
    public void expiring() {
      unkept = true;
      sink.expiring();
    }
  }

  private static final class Stripe {
    private final int ringSize;
    private final int slotMask;
    private byte[] ring;
    private long[] slots;
    // Position where the next entry starts; it only grows, so positions name entries uniquely.
    private long head;
    private long hits;
    private long misses;

    Stripe(long bytes) {
      // About one index slot (8 bytes) per 64 bytes of ring.
      long slotCount = Math.max(WAYS, Long.highestOneBit(bytes / 72));
      slotMask = (int) (slotCount - 1);
      // Too small a stripe keeps nothing (put refuses every entry).
      ringSize = (int) Math.max(0, bytes - slotCount * Long.BYTES);
    }

    long usage() {
      return ring == null ? 0 : (long) ring.length + (long) slots.length * Long.BYTES;
    }

    synchronized int read(long h, long owner, int bucket, byte[] key, ColumnsSink sink) {
      if (ring != null) {
        int at = find(h, owner, bucket, key);
        if (at >= 0) {
          hits++;
          int start = (int) ((slots[at] & POSITION_MASK) % ringSize);
          int payloadLength = (int) INT.get(ring, start + 16);
          if (payloadLength < 0) {
            return ABSENT;
          }
          int p = start + HEADER + key.length;
          int end = p + payloadLength;
          while (p < end) {
            int index = (ring[p] & 0xFF) << 8 | (ring[p + 1] & 0xFF);
            int len = (int) INT.get(ring, p + 2);
            sink.accept(index, ring, p + VALUE_HEADER, len);
            p += VALUE_HEADER + len;
          }
          return FOUND;
        }
      }
      misses++;
      return NOT_CACHED;
    }

    synchronized void put(
        long h, long owner, int bucket, byte[] key, byte[] payload, int payloadLength) {
      int size = HEADER + key.length + Math.max(0, payloadLength);
      if (size > ringSize / 4) {
        return;
      }
      if (ring == null) {
        ring = new byte[ringSize];
        slots = new long[slotMask + 1];
      }
      int existing = find(h, owner, bucket, key);
      int at = existing >= 0 ? existing : victim(h);
      if (head % ringSize + size > ringSize) {
        head += ringSize - head % ringSize;
      }
      int start = (int) (head % ringSize);
      LONG.set(ring, start, owner);
      INT.set(ring, start + 8, bucket);
      INT.set(ring, start + 12, key.length);
      INT.set(ring, start + 16, payloadLength);
      System.arraycopy(key, 0, ring, start + HEADER, key.length);
      if (payloadLength > 0) {
        System.arraycopy(payload, 0, ring, start + HEADER + key.length, payloadLength);
      }
      slots[at] = (h & ~POSITION_MASK) | head;
      head += size;
    }

    /** The slot of {@code key}'s live entry, or -1. */
    private int find(long h, long owner, int bucket, byte[] key) {
      int set = (int) h & slotMask & -WAYS;
      long tag = h & ~POSITION_MASK;
      for (int i = set; i < set + WAYS; i++) {
        long slot = slots[i];
        if (slot != 0 && (slot & ~POSITION_MASK) == tag && live(slot)) {
          int start = (int) ((slot & POSITION_MASK) % ringSize);
          if ((long) LONG.get(ring, start) == owner
              && (int) INT.get(ring, start + 8) == bucket
              && (int) INT.get(ring, start + 12) == key.length
              && Arrays.equals(
                  ring, start + HEADER, start + HEADER + key.length, key, 0, key.length)) {
            return i;
          }
        }
      }
      return -1;
    }

    /** An empty or overwritten slot of {@code h}'s set, else the one of its oldest entry. */
    private int victim(long h) {
      int set = (int) h & slotMask & -WAYS;
      int oldest = set;
      for (int i = set; i < set + WAYS; i++) {
        long slot = slots[i];
        if (slot == 0 || !live(slot)) {
          return i;
        }
        if ((slot & POSITION_MASK) < (slots[oldest] & POSITION_MASK)) {
          oldest = i;
        }
      }
      return oldest;
    }

    /** Whether the entry at the slot's position was not overwritten since (the ring's last lap). */
    private boolean live(long slot) {
      return (slot & POSITION_MASK) >= head - ringSize;
    }
  }
}
