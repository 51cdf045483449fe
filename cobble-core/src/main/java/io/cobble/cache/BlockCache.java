package io.cobble.cache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Cache of decoded blocks, charged by bytes and shared by every table of a Db, evicting by second
 * chance (CLOCK): a hit only marks its block referenced, and eviction, walking from the least
 * recently inserted end, gives a referenced block another round at the front instead of dropping it
 * (see {@code Shard.touch}). Keys are {@code (file number, block offset)} packed into a long. Each
 * shard keeps its entries in parallel primitive arrays (an open-addressing index plus an intrusive
 * order list), so a cached block costs no wrapper objects and a lookup allocates nothing.
 *
 * <p>Point reads {@link #acquire pin} the block they search and {@link #release} it afterwards.
 * Blocks that point reads bring in are decoded into arrays the cache hands out ({@link #allocate})
 * and takes back when it evicts them unpinned, so a point read that misses the cache allocates
 * nothing either. Such a recycled array may be longer than its block; {@link #get}, whose callers
 * keep the block for as long as they like, never sees one: it swaps the entry for an exact copy
 * first, and the array of an entry that {@link #get} handed out is never recycled.
 *
 * <p>A data block read with its table's {@link BlockRefs} is also referenced from there while it is
 * cached, and later reads of it skip this cache's lock and probe: they pin it in its array's first
 * {@link #RESERVED_BYTES}, which hold its pin count, a hit mark for the eviction order, what block
 * it is and its length. Such an array is recycled only when the cache claims it there with no pin
 * held; one still pinned when it leaves is dropped, as a pinned block always is.
 *
 * <p>Part of the capacity can be {@link #reserve reserved} for blocks a table keeps outside the
 * eviction order (a read-only table's resident blocks); the evictable part then holds that much
 * less. Memory of another budget that is idle for now can be {@link #lend lent} to the evictable
 * part on top of the capacity.
 */
public final class BlockCache {
  private static final int SHARDS = 16;

  /**
   * Bytes at the start of a data block's array that belong to the cache ({@link BlockRefs}); the
   * block's own bytes follow them.
   */
  public static final int RESERVED_BYTES = 24;

  private static final VarHandle INT =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.nativeOrder());
  private static final VarHandle LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());
  // The reserved bytes: pins by reference (CLAIMED once the cache took the array back for reuse),
  // the hit mark of reads by reference, the block's identity (BlockRefs.identity) and its length.
  private static final int PINS_AT = 0;
  private static final int HIT_AT = 4;
  private static final int IDENTITY_AT = 8;
  private static final int LENGTH_AT = 16;
  private static final int CLAIMED = -1;

  private final LongAdder directHits = new LongAdder();

  private final Shard[] shards = new Shard[SHARDS];
  private final long capacity;
  private final AtomicLong reserved = new AtomicLong();
  private volatile long lent;

  public BlockCache(long capacityBytes) {
    this.capacity = capacityBytes;
    for (int i = 0; i < SHARDS; i++) {
      shards[i] = new Shard(capacityBytes / SHARDS);
    }
  }

  /**
   * Sets {@code bytes} of the capacity aside for blocks held outside the eviction order, evicting
   * from the evictable part as needed; false (nothing reserved) when that would leave the evictable
   * part less than an eighth of the capacity, which scans and tables without a reservation keep
   * using.
   */
  public boolean reserve(long bytes) {
    long limit = reservable();
    for (long r = reserved.get(); ; r = reserved.get()) {
      if (bytes < 0 || r + bytes > limit) {
        return false;
      }
      if (reserved.compareAndSet(r, r + bytes)) {
        break;
      }
    }
    resizeShards();
    return true;
  }

  /** The most {@link #reserve} sets aside in all: seven eighths of the capacity. */
  public long reservable() {
    return capacity - capacity / 8;
  }

  /** Gives back what {@link #reserve} set aside. */
  public void unreserve(long bytes) {
    reserved.addAndGet(-bytes);
    resizeShards();
  }

  /**
   * Lets the evictable part hold {@code bytes} beyond the capacity (memory of another budget that
   * nothing uses right now), replacing what was lent before; a smaller loan evicts at once, before
   * the lender uses the memory it took back.
   */
  public void lend(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("cannot lend " + bytes + " bytes");
    }
    lent = bytes;
    resizeShards();
  }

  /** Bytes {@link #lend lent} to the evictable part beyond the capacity. */
  public long lent() {
    return lent;
  }

  /** Bytes set aside by {@link #reserve}. */
  public long reserved() {
    return reserved.get();
  }

  private synchronized void resizeShards() {
    long each = (capacity + lent - reserved.get()) / SHARDS;
    for (Shard s : shards) {
      s.resize(each);
    }
  }

  public static long key(long fileNumber, long offset) {
    return (fileNumber << 40) | offset;
  }

  private Shard shard(long key) {
    return shards[shardIndex(key)];
  }

  /** The shard a key lives in; each shard has 1/16 of the capacity and its own eviction order. */
  int shardIndex(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h >>> 60) & (SHARDS - 1);
  }

  public byte[] get(long key) {
    return shard(key).get(key);
  }

  public void put(long key, byte[] block) {
    shard(key).put(key, block, block.length, false);
  }

  /**
   * Pins the block of {@code key} for a point read and points {@code pin} at it; false (and nothing
   * pinned) on a miss. A pinned block's array is not recycled until {@link #release}.
   */
  public boolean acquire(long key, Pin pin) {
    return shard(key).acquire(key, pin, null, 0);
  }

  /**
   * As {@link #acquire(long, Pin)} for data block {@code block} of the table of {@code refs}, which
   * then references the cached block until it leaves the cache.
   */
  public boolean acquire(long key, Pin pin, BlockRefs refs, int block) {
    return shard(key).acquire(key, pin, refs, block);
  }

  /** Unpins what {@link #acquire} or {@link #insertPinned} pinned. */
  public void release(Pin pin) {
    if (pin.data != null) {
      shard(pin.key).release(pin);
      pin.data = null;
    }
  }

  /**
   * An array of at least {@code length} bytes to decode the block of {@code key} into before {@link
   * #insertPinned}: one the cache evicted when there is one, else a new one.
   */
  public byte[] allocate(long key, int length) {
    return shard(key).allocate(length);
  }

  /**
   * Caches the first {@code length} bytes of {@code data} (from {@link #allocate}) as the block of
   * {@code key} and pins it. When another reader cached the block first, that copy is pinned and
   * {@code data} goes back to the cache's spare arrays.
   */
  public void insertPinned(long key, byte[] data, int length, Pin pin) {
    shard(key).insertPinned(key, data, length, pin, null, 0);
  }

  /**
   * As {@link #insertPinned(long, byte[], int, Pin)} for data block {@code block} of the table of
   * {@code refs}, which then references the cached block until it leaves the cache; the block's
   * bytes start after the first {@link #RESERVED_BYTES}.
   */
  public void insertPinned(long key, byte[] data, int length, Pin pin, BlockRefs refs, int block) {
    shard(key).insertPinned(key, data, length, pin, refs, block);
  }

  /**
   * A pinned block: valid between {@link #acquire}/{@link #insertPinned} and {@link #release}. One
   * per reading thread, reused.
   */
  public static final class Pin {
    private long key;
    private byte[] data;
    private int length;
    // The pinned entry's number when pinned, so a release need not search for it.
    private int entry;

    /** The block's bytes: the first {@link #length()} bytes of this array. */
    public byte[] data() {
      return data;
    }

    public int length() {
      return length;
    }
  }

  /**
   * Pins {@code cached} for a read by reference when it still holds the block {@code identity}
   * names; false (nothing pinned) when the cache claimed the array or it holds another block.
   */
  static boolean pinInPlace(byte[] cached, long identity) {
    int p;
    do {
      p = (int) INT.getVolatile(cached, PINS_AT);
      if (p < 0) {
        return false;
      }
    } while (!INT.compareAndSet(cached, PINS_AT, p, p + 1));
    // Read after the pin: an array the cache gave a new block since is seen with its new identity.
    if ((long) LONG.get(cached, IDENTITY_AT) != identity) {
      unpinInPlace(cached);
      return false;
    }
    cached[HIT_AT] = 1;
    return true;
  }

  static void unpinInPlace(byte[] cached) {
    INT.getAndAdd(cached, PINS_AT, -1);
  }

  /** The length of the block {@link BlockRefs#pin} pinned, its reserved bytes included. */
  public static int cachedLength(byte[] cached) {
    return (int) INT.get(cached, LENGTH_AT);
  }

  void countDirectHit() {
    directHits.increment();
  }

  /** Drops every block of a file (called when the file is deleted). */
  public void evictFile(long fileNumber) {
    for (Shard s : shards) {
      s.evictFile(fileNumber);
    }
  }

  public long hits() {
    long n = directHits.sum();
    for (Shard s : shards) {
      n += s.hits();
    }
    return n;
  }

  public long misses() {
    long n = 0;
    for (Shard s : shards) {
      n += s.misses();
    }
    return n;
  }

  /** Bytes the evictable part holds plus those {@link #reserve reserved}. */
  public long usage() {
    long u = reserved.get();
    for (Shard s : shards) {
      u += s.usage();
    }
    return u;
  }

  /**
   * One shard's entries. An entry's metadata is packed into {@link #STRIDE} adjacent longs of
   * {@code meta} (key; order links; charge and index slot; block length, pin count and whether the
   * array may be recycled; whether it was hit since it last came to the front), so a lookup and its
   * mark touch one cache line per entry involved instead of one per field. The charge (the array's
   * length) is kept so eviction never touches the cold block it drops, and the slot so removal
   * needs no probe for the victim or for the entry moved into its place. Blocks sit in {@code
   * values} at the entry number.
   */
  private static final class Shard {
    private static final int STRIDE = 6;
    private static final int KEY = 0;
    private static final int LINKS = 1;
    private static final int INFO = 2;
    private static final int STATE = 3;
    private static final int REFERENCED = 4;
    // The block ordinal in its table of an entry that owners references.
    private static final int OWNED = 5;
    private static final long RECYCLABLE = 1;
    private static final long ONE_PIN = 2;
    private static final long PINS = 0xFFFFFFFEL;

    private long capacity;
    private final SpareArrays spares;
    // Spares kept beyond the capacity the entries leave free: in a full shard each miss takes a
    // spare and its insert evicts about one block back, so a few suffice.
    private final long spareAllowance;
    private long usage;
    private long[] meta = new long[16 * STRIDE];
    private byte[][] values = new byte[16][];
    // Per entry, the table references that name its block ({@link BlockRefs}), or null.
    private BlockRefs[] owners = new BlockRefs[16];
    private int[] index = new int[32];
    private int size;
    private int head = -1;
    private int tail = -1;
    // Lookups ({@code get}, {@code acquire}) that found their block and that did not: counted
    // under the shard's lock, which each lookup holds anyway, rather than with an atomic of its
    // own.
    private long hits;
    private long misses;

    Shard(long capacity) {
      this.capacity = capacity;
      this.spares = new SpareArrays();
      this.spareAllowance = capacity / 16 + (64 << 10);
      Arrays.fill(index, -1);
    }

    private static int hash(long key) {
      long h = key * 0xC2B2AE3D27D4EB4FL;
      return (int) (h ^ (h >>> 32));
    }

    private long key(int e) {
      return meta[e * STRIDE + KEY];
    }

    private int prev(int e) {
      return (int) (meta[e * STRIDE + LINKS] >> 32);
    }

    private int next(int e) {
      return (int) meta[e * STRIDE + LINKS];
    }

    private void setLinks(int e, int prev, int next) {
      meta[e * STRIDE + LINKS] = ((long) prev << 32) | (next & 0xFFFFFFFFL);
    }

    private void setPrev(int e, int prev) {
      setLinks(e, prev, next(e));
    }

    private void setNext(int e, int next) {
      setLinks(e, prev(e), next);
    }

    private int charge(int e) {
      return (int) (meta[e * STRIDE + INFO] >>> 32);
    }

    private int slot(int e) {
      return (int) meta[e * STRIDE + INFO];
    }

    private void setInfo(int e, int charge, int slot) {
      meta[e * STRIDE + INFO] = ((long) charge << 32) | (slot & 0xFFFFFFFFL);
    }

    private int length(int e) {
      return (int) (meta[e * STRIDE + STATE] >>> 32);
    }

    private long state(int e) {
      return meta[e * STRIDE + STATE];
    }

    /** The index slot holding {@code key}, or the empty slot where it would go (then -1 - slot). */
    private int probe(long key) {
      int mask = index.length - 1;
      for (int i = hash(key) & mask; ; i = (i + 1) & mask) {
        int e = index[i];
        if (e < 0) {
          return -1 - i;
        }
        if (key(e) == key) {
          return i;
        }
      }
    }

    synchronized void resize(long capacity) {
      this.capacity = capacity;
      evictOverCapacity();
    }

    synchronized byte[] get(long key) {
      int i = probe(key);
      if (i < 0) {
        misses++;
        return null;
      }
      hits++;
      int e = index[i];
      touch(e);
      byte[] v = values[e];
      if ((state(e) & RECYCLABLE) != 0) {
        // The caller keeps the block: hand out an exact copy that is never recycled.
        byte[] exact = Arrays.copyOf(v, length(e));
        retire(v, charge(e), state(e), disown(e));
        usage += exact.length - charge(e);
        values[e] = exact;
        setInfo(e, exact.length, i);
        meta[e * STRIDE + STATE] = (long) exact.length << 32;
        v = exact;
        evictOverCapacity();
      }
      return v;
    }

    synchronized boolean acquire(long key, Pin pin, BlockRefs refs, int block) {
      int i = probe(key);
      if (i < 0) {
        misses++;
        return false;
      }
      hits++;
      int e = index[i];
      touch(e);
      own(e, refs, block);
      meta[e * STRIDE + STATE] += ONE_PIN;
      pin.key = key;
      pin.data = values[e];
      pin.length = length(e);
      pin.entry = e;
      return true;
    }

    synchronized void release(Pin pin) {
      int e = pin.entry;
      // The entry may have moved (another one removed) while pinned: then search for it.
      if (e < 0 || e >= size || key(e) != pin.key) {
        int i = probe(pin.key);
        if (i < 0) {
          return;
        }
        e = index[i];
      }
      // A block replaced or evicted while pinned was dropped, not recycled: nothing to undo.
      if (values[e] == pin.data && (state(e) & PINS) != 0) {
        meta[e * STRIDE + STATE] -= ONE_PIN;
      }
    }

    synchronized long hits() {
      return hits;
    }

    synchronized long misses() {
      return misses;
    }

    synchronized byte[] allocate(int length) {
      return spares.take(length, spareRoom());
    }

    synchronized void insertPinned(
        long key, byte[] data, int length, Pin pin, BlockRefs refs, int block) {
      int i = probe(key);
      if (i >= 0) {
        spares.give(data, data.length, spareRoom());
        int e = index[i];
        touch(e);
        own(e, refs, block);
        meta[e * STRIDE + STATE] += ONE_PIN;
        pin.key = key;
        pin.data = values[e];
        pin.length = length(e);
        pin.entry = e;
        return;
      }
      pin.key = key;
      pin.data = data;
      pin.length = length;
      pin.entry = -1;
      if (data.length > capacity) {
        // Too big to cache: the reader keeps it for this one read only.
        return;
      }
      put(key, data, length, true);
      // Growing or evicting may have moved the new entry.
      int e = index[probe(key)];
      meta[e * STRIDE + STATE] += ONE_PIN;
      pin.entry = e;
      own(e, refs, block);
    }

    /**
     * Lets {@code refs} reference entry {@code e}'s array as its data block {@code block}, unless
     * it has an owner already or is not a recycled-array block. Its reserved bytes are set first
     * and published by the release of the reference.
     */
    private void own(int e, BlockRefs refs, int block) {
      if (refs == null || owners[e] != null || (state(e) & RECYCLABLE) == 0) {
        return;
      }
      byte[] a = values[e];
      a[HIT_AT] = 0;
      LONG.set(a, IDENTITY_AT, refs.identity(block));
      INT.set(a, LENGTH_AT, length(e));
      // No reader pins by reference an array nobody references: the count is 0 or CLAIMED.
      INT.setRelease(a, PINS_AT, 0);
      owners[e] = refs;
      meta[e * STRIDE + OWNED] = block;
      refs.set(block, a);
    }

    /** Clears the reference to entry {@code e}'s array, if any; whether there was one. */
    private boolean disown(int e) {
      BlockRefs refs = owners[e];
      if (refs == null) {
        return false;
      }
      refs.clear((int) meta[e * STRIDE + OWNED], values[e]);
      owners[e] = null;
      return true;
    }

    /**
     * Whether an array that was referenced can be reused: the cache claims it, unless a read by
     * reference still holds a pin.
     */
    private static boolean claim(byte[] a) {
      int p = (int) INT.getVolatile(a, PINS_AT);
      return p == CLAIMED || (p == 0 && INT.compareAndSet(a, PINS_AT, 0, CLAIMED));
    }

    synchronized void put(long key, byte[] value, int length, boolean recyclable) {
      if (value.length > capacity) {
        return;
      }
      long state = ((long) length << 32) | (recyclable ? RECYCLABLE : 0);
      int i = probe(key);
      if (i >= 0) {
        remove(index[i]);
      }
      // Room first, then the new entry: evicting after it could make the new entry, unmarked at
      // the front, the victim once every older entry had its second chance.
      evictOver(capacity - value.length);
      if (size == values.length) {
        grow();
      }
      i = probe(key);
      int e = size++;
      meta[e * STRIDE + KEY] = key;
      meta[e * STRIDE + STATE] = state;
      values[e] = value;
      setInfo(e, value.length, -1 - i);
      usage += value.length;
      pushFront(e);
      index[-1 - i] = e;
    }

    private void evictOverCapacity() {
      evictOver(capacity);
    }

    /** Evicts until the entries use at most {@code limit} bytes. */
    private void evictOver(long limit) {
      // Each second chance clears a mark, so after one round over the entries the tail is unmarked;
      // the bound only guards the loop.
      int chances = size;
      while (usage > limit && tail >= 0) {
        int e = tail;
        // Both marks are read, so both are cleared for the next round.
        if ((hitByReference(e) | meta[e * STRIDE + REFERENCED] != 0) && chances-- > 0) {
          unlink(e);
          pushFront(e);
        } else {
          remove(e);
        }
      }
    }

    /** Whether a read by reference hit entry {@code e} since its last chance; clears the mark. */
    private boolean hitByReference(int e) {
      if (owners[e] == null) {
        return false;
      }
      byte[] a = values[e];
      boolean hit = a[HIT_AT] != 0;
      a[HIT_AT] = 0;
      return hit;
    }

    /**
     * Keeps an array leaving the cache ({@code length} bytes: its charge) for reuse when nobody can
     * still be reading it; {@code referenced}: it was referenced by a table until now.
     */
    private void retire(byte[] array, int length, long state, boolean referenced) {
      if ((state & RECYCLABLE) != 0 && (state & PINS) == 0 && (!referenced || claim(array))) {
        spares.give(array, length, spareRoom());
      }
    }

    /**
     * Bytes of spares to keep: what the entries leave free of the capacity (so that refilling the
     * cache after a table's blocks were dropped allocates nothing), or a small allowance.
     */
    private long spareRoom() {
      return Math.max(capacity - usage, spareAllowance);
    }

    private void grow() {
      int n = values.length * 2;
      meta = Arrays.copyOf(meta, n * STRIDE);
      values = Arrays.copyOf(values, n);
      owners = Arrays.copyOf(owners, n);
      index = new int[n * 2];
      Arrays.fill(index, -1);
      for (int e = 0; e < size; e++) {
        int s = -1 - probe(key(e));
        index[s] = e;
        setInfo(e, charge(e), s);
      }
    }

    /** Backward-shift deletion keeps probe chains intact without tombstones. */
    private void deleteSlot(int i) {
      int mask = index.length - 1;
      int j = i;
      while (true) {
        j = (j + 1) & mask;
        int e = index[j];
        if (e < 0) {
          break;
        }
        int k = hash(key(e)) & mask;
        boolean stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
          index[i] = e;
          setInfo(e, charge(e), i);
          i = j;
        }
      }
      index[i] = -1;
    }

    /** Removes entry e, moving the last entry into its place to keep the arrays dense. */
    private void remove(int e) {
      usage -= charge(e);
      retire(values[e], charge(e), state(e), disown(e));
      unlink(e);
      deleteSlot(slot(e));
      int last = size - 1;
      if (e != last) {
        index[slot(last)] = e;
        int p = prev(last);
        int n = next(last);
        System.arraycopy(meta, last * STRIDE, meta, e * STRIDE, STRIDE);
        values[e] = values[last];
        owners[e] = owners[last];
        if (p >= 0) {
          setNext(p, e);
        } else {
          head = e;
        }
        if (n >= 0) {
          setPrev(n, e);
        } else {
          tail = e;
        }
      }
      values[last] = null;
      owners[last] = null;
      size--;
    }

    private void unlink(int e) {
      int p = prev(e);
      int n = next(e);
      if (p >= 0) {
        setNext(p, n);
      } else {
        head = n;
      }
      if (n >= 0) {
        setPrev(n, p);
      } else {
        tail = p;
      }
    }

    /**
     * A hit: marks {@code e} referenced, in the entry's own metadata, which the probe has just
     * read. Moving it to the front (eviction does that, see {@link #evictOverCapacity}) would write
     * the links of its two neighbours and of the list head: three more cache lines, cold when the
     * hits are spread over more blocks than the CPU caches hold.
     */
    private void touch(int e) {
      meta[e * STRIDE + REFERENCED] = 1;
    }

    /** Puts {@code e} at the front, unmarked. */
    private void pushFront(int e) {
      meta[e * STRIDE + REFERENCED] = 0;
      setLinks(e, -1, head);
      if (head >= 0) {
        setPrev(head, e);
      }
      head = e;
      if (tail < 0) {
        tail = e;
      }
    }

    synchronized void evictFile(long fileNumber) {
      for (int e = size - 1; e >= 0; e--) {
        if ((key(e) >>> 40) == fileNumber) {
          remove(e);
        }
      }
    }

    synchronized long usage() {
      return usage;
    }
  }
}
