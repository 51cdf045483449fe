package io.cobble.reader;

import io.cobble.Config;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.cache.BlockCache;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.sst.MemoryOnlyReads;
import io.cobble.sst.SharedTables;
import io.cobble.storage.Storage;
import io.cobble.util.ColumnsSink;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Reads a global snapshot across all its shards from any process: follows {@code global/CURRENT}
 * (see {@link #refresh()}) or stays on a fixed global snapshot. Shards open lazily on first use and
 * share one block cache. Scans can be cut into {@link ScanSplit}s per shard and bucket range.
 *
 * <p>{@link #refresh()} retires the shards the new snapshot no longer uses; they are closed at the
 * following refresh (or {@link #close()}), so reads that started before a refresh can finish. The
 * shard snapshots a refresh moves to reuse the open tables of the files they still list ({@link
 * SharedTables}): their metadata and kept blocks stay in memory, and only new files are read.
 */
public final class Reader implements AutoCloseable {
  /** What {@link #getInMemory} returns when the answer needs storage; compare by identity. */
  public static final byte[][] NOT_IN_MEMORY = new byte[0][];

  private final Storage volume;
  private final SnapshotStore store;
  private final Config config;
  private final boolean followCurrent;
  private final BlockCache cache;
  // Null when row-cache.size is 0.
  private final RowCache rowCache;
  private final AtomicLong cacheIds = new AtomicLong(1);
  private final SharedTables tables = new SharedTables();
  private final Map<String, ReadOnlyDb> shards = new ConcurrentHashMap<>();
  private final List<ReadOnlyDb> retired = new ArrayList<>();
  private volatile GlobalSnapshot global;
  private volatile Route route;
  private boolean closed;

  private Reader(Storage volume, Config config, boolean followCurrent, GlobalSnapshot global) {
    this.volume = volume;
    this.store = new SnapshotStore(volume);
    this.config = config;
    this.followCurrent = followCurrent;
    this.cache = new BlockCache(config.blockCacheSize());
    this.rowCache = config.rowCacheSize() > 0 ? new RowCache(config.rowCacheSize()) : null;
    this.global = global;
    this.route = new Route(global);
  }

  /** A reader that follows {@code global/CURRENT}. */
  public static Reader open(Storage volume, Config config) {
    SnapshotStore store = new SnapshotStore(volume);
    return new Reader(
        volume,
        config,
        true,
        store.currentGlobal().orElseGet(() -> store.requireGlobal(store.requireCurrentGlobalId())));
  }

  /** A reader fixed on global snapshot {@code globalId}. */
  public static Reader open(Storage volume, long globalId, Config config) {
    return new Reader(volume, config, false, new SnapshotStore(volume).requireGlobal(globalId));
  }

  public GlobalSnapshot snapshot() {
    return global;
  }

  /** The block cache every shard of this reader shares. */
  public BlockCache cache() {
    return cache;
  }

  /** The cache of point-read results every shard of this reader shares; null without one. */
  public RowCache rowCache() {
    return rowCache;
  }

  /** Tables its shards hold open, each file counted once however many shards list it. */
  int openTables() {
    return tables.size();
  }

  /** Shards opened so far (they open on first use). */
  public int openShards() {
    return shards.size();
  }

  /**
   * Moves to the snapshot {@code CURRENT} names now, if it changed; returns whether it did. A
   * reader on a fixed id never moves.
   */
  public synchronized boolean refresh() {
    checkOpen();
    if (!followCurrent) {
      return false;
    }
    for (ReadOnlyDb db : retired) {
      db.close();
    }
    retired.clear();
    long id = store.currentGlobalId().orElse(global.id());
    if (id == global.id()) {
      return false;
    }
    GlobalSnapshot next = store.requireGlobal(id);
    List<String> keep = new ArrayList<>();
    for (GlobalSnapshot.Part p : next.parts()) {
      keep.add(key(p.shardId(), p.snapshotId()));
    }
    global = next;
    route = new Route(next);
    for (String k : new ArrayList<>(shards.keySet())) {
      if (!keep.contains(k)) {
        retired.add(shards.remove(k));
      }
    }
    return true;
  }

  public byte[][] get(int bucket, String family, byte[] key) {
    return shardOf(bucket).get(bucket, family, key);
  }

  /**
   * As {@link #get(int, String, byte[])}, reading only the columns {@code projection} names (in
   * that order); a column the key's shard does not have yet (appended to the schema later) reads as
   * null. Null when the row has none of them.
   */
  public byte[][] get(int bucket, String family, byte[] key, int[] projection) {
    ReadOnlyDb db = shardOf(bucket);
    ColumnProjection columns = db.projection(family, projection);
    return columns.empty()
        ? null
        : columns.expand(db.get(bucket, family, key, columns.readOptions()));
  }

  /**
   * As {@link #get(int, String, byte[], int[])}, handing each of the row's values of the {@code
   * projection} columns to {@code sink} (with its index in {@code projection}) instead of returning
   * an array of copies; returns whether there was any. The bytes are valid only during the call
   * (see {@link io.cobble.Db#readColumns}).
   */
  public boolean readColumns(
      int bucket, String family, byte[] key, int[] projection, ColumnsSink sink) {
    return shardOf(bucket).readRequested(bucket, family, key, projection, sink);
  }

  /**
   * As {@link #readColumns}, answered only from memory (see {@link #getInMemory}): null when the
   * answer needs storage, otherwise whether the row had any of the columns. {@code sink} is called
   * only when the answer is in memory.
   */
  public Boolean readColumnsInMemory(
      int bucket, String family, byte[] key, int[] projection, ColumnsSink sink) {
    Route r = route;
    ReadOnlyDb db = bucket >= 0 && bucket < r.byBucket.length() ? r.byBucket.get(bucket) : null;
    if (db == null) {
      return null;
    }
    checkOpen();
    MemoryOnlyReads.begin();
    try {
      return db.readRequested(bucket, family, key, projection, sink);
    } catch (MemoryOnlyReads.NotInMemory e) {
      return null;
    } finally {
      MemoryOnlyReads.end();
    }
  }

  /**
   * As {@link #get(int, String, byte[], int[])}, answered only from memory: {@link #NOT_IN_MEMORY}
   * when the answer needs a block that is neither pinned nor cached, or a shard not opened yet
   * (opening reads its manifest). A caller that must not wait on storage tries this first.
   */
  public byte[][] getInMemory(int bucket, String family, byte[] key, int[] projection) {
    Route r = route;
    ReadOnlyDb db = bucket >= 0 && bucket < r.byBucket.length() ? r.byBucket.get(bucket) : null;
    if (db == null) {
      return NOT_IN_MEMORY;
    }
    checkOpen();
    ColumnProjection columns = db.projection(family, projection);
    if (columns.empty()) {
      return null;
    }
    MemoryOnlyReads.begin();
    try {
      return columns.expand(db.get(bucket, family, key, columns.readOptions()));
    } catch (MemoryOnlyReads.NotInMemory e) {
      return NOT_IN_MEMORY;
    } finally {
      MemoryOnlyReads.end();
    }
  }

  public ScanCursor scan(int bucket, String family, byte[] start, byte[] end, ScanOptions options) {
    GlobalSnapshot.Part p = global.partFor(bucket);
    return shard(p.shardId(), p.snapshotId()).scan(bucket, family, start, end, options);
  }

  /** One split per shard snapshot and bucket range of the current global snapshot. */
  public List<ScanSplit> splits(String family) {
    List<ScanSplit> out = new ArrayList<>();
    for (GlobalSnapshot.Part p : global.parts()) {
      for (BucketRange r : p.ranges()) {
        out.add(new ScanSplit(family, p.shardId(), p.snapshotId(), r.lo(), r.hi(), r.lo(), null));
      }
    }
    return out;
  }

  /**
   * The row of {@code key} in one shard snapshot (of this or an earlier global snapshot, while it
   * exists), or null.
   */
  public byte[][] get(String shardId, long snapshotId, int bucket, String family, byte[] key) {
    return shard(shardId, snapshotId).get(bucket, family, key);
  }

  /**
   * Opens a read-only shard over {@code manifest}, which may list only some files of a published
   * snapshot (to read just those), sharing this reader's block cache. The caller closes it.
   */
  public ReadOnlyDb open(ShardSnapshot manifest) {
    checkOpen();
    return openShard(manifest, null);
  }

  /**
   * A read-only Db over {@code s} on this reader's cache and open tables; its files get cache ids
   * of their own, unless a table open for an earlier snapshot serves them.
   */
  private ReadOnlyDb openShard(ShardSnapshot s, RowCache rows) {
    Map<Long, Long> ids = new ConcurrentHashMap<>();
    return ReadOnlyDb.open(
        volume,
        s,
        config,
        cache,
        n -> ids.computeIfAbsent(n, x -> cacheIds.getAndIncrement()),
        rows,
        tables,
        global.parts().size());
  }

  /** Scans a split (of this or an earlier global snapshot whose shard snapshot still exists). */
  public SplitScanner scan(ScanSplit split) {
    return new SplitScanner(shard(split.shardId(), split.snapshotId()), split, null);
  }

  /**
   * As {@link #scan(ScanSplit)}, reading only the columns {@code projection} names (in that order);
   * rows with none of them are skipped.
   */
  public SplitScanner scan(ScanSplit split, int[] projection) {
    ReadOnlyDb db = shard(split.shardId(), split.snapshotId());
    return new SplitScanner(
        db, split, ColumnProjection.of(projection.clone(), columnCount(db, split.family())));
  }

  private static int columnCount(ReadOnlyDb db, String family) {
    return db.snapshot().schema().requireFamily(family).columnCount();
  }

  /** The shard serving {@code bucket} in the current snapshot, found once per bucket. */
  private ReadOnlyDb shardOf(int bucket) {
    Route r = route;
    ReadOnlyDb db = bucket >= 0 && bucket < r.byBucket.length() ? r.byBucket.get(bucket) : null;
    if (db == null) {
      GlobalSnapshot.Part p = r.global.partFor(bucket);
      db = shard(p.shardId(), p.snapshotId());
      r.byBucket.set(bucket, db);
    } else {
      checkOpen();
    }
    return db;
  }

  private ReadOnlyDb shard(String shardId, long snapshotId) {
    checkOpen();
    return shards.computeIfAbsent(
        key(shardId, snapshotId), k -> openShard(store.require(shardId, snapshotId), rowCache));
  }

  /**
   * The shards of one global snapshot by bucket, filled in as buckets are first read: a point read
   * finds its shard without searching the snapshot's parts or building the shard's map key.
   */
  private static final class Route {
    final GlobalSnapshot global;
    final AtomicReferenceArray<ReadOnlyDb> byBucket;

    Route(GlobalSnapshot global) {
      this.global = global;
      this.byBucket = new AtomicReferenceArray<>(global.totalBuckets());
    }
  }

  private static String key(String shardId, long snapshotId) {
    return shardId + "/" + snapshotId;
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("reader over " + volume.uri() + " is closed");
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (ReadOnlyDb db : retired) {
      db.close();
    }
    for (ReadOnlyDb db : shards.values()) {
      db.close();
    }
    shards.clear();
  }
}
