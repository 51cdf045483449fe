package io.cobble;

import io.cobble.cache.BlockCache;
import io.cobble.cache.DiskCache;
import io.cobble.compaction.CompactionFilter;
import io.cobble.memtable.MemTable;
import io.cobble.read.PointReader;
import io.cobble.read.RangeProbe;
import io.cobble.row.ColumnLayout;
import io.cobble.row.Layouts;
import io.cobble.row.ValueLoader;
import io.cobble.schema.ColumnSpec;
import io.cobble.schema.Schema;
import io.cobble.storage.Storage;
import io.cobble.storage.Volume;
import io.cobble.storage.VolumeSet;
import io.cobble.util.Bytes;
import io.cobble.util.ColumnsSink;
import io.cobble.util.ValueSink;
import io.cobble.version.AdoptedFiles;
import io.cobble.version.ExternalFiles;
import io.cobble.version.FileMeta;
import io.cobble.version.PendingExpansion;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import io.cobble.version.VersionEdit;
import io.cobble.version.VersionSet;
import io.cobble.vlog.ValueLogFile;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.LongUnaryOperator;

/**
 * One shard of Cobble: owns bucket ranges and column families, each family an LSM tree. Safe for
 * concurrent use; writes are serialised internally, reads run in parallel against an immutable
 * {@link Version}. Data not yet flushed is lost on a crash by design; {@link #close()} flushes.
 *
 * <p>Internal key order is bucket (2 bytes big-endian) then the caller's key, so a bucket range is
 * a contiguous key range of every tree. In the shared memtable the family id (2 bytes) precedes
 * that, so a flush writes one L0 table per family it touched.
 *
 * <p>Semantics callers rely on:
 *
 * <ul>
 *   <li>Each column is written independently with put, merge or delete. A read returns null when
 *       none of the requested columns has a live value; otherwise columns without a value carry
 *       their schema default (or null).
 *   <li>TTL is per write: {@link WriteBatch#DEFAULT_TTL} uses {@code ttl.default}, {@link
 *       WriteBatch#NO_TTL} never expires, a positive value expires that many ms after the write. A
 *       merge's result takes the merge's expiry.
 *   <li>A merge folds onto the column's value only if that value was alive when the merge was
 *       written; onto a deleted, expired or absent value it starts from the column default (or from
 *       nothing). This holds whenever the fold physically happens.
 *   <li>A {@link WriteBatch} applies all of its operations on one row as one atomic change.
 * </ul>
 *
 * <p>Db is the facade of its parts: {@link ShardState} (what they share: directory, lock, version
 * set, layouts, owned buckets, mutex), {@link ShardRecovery} (open), {@link WritePath}, {@link
 * Flusher}, {@link CompactionScheduler} and {@link BucketExpansion}.
 */
public final class Db implements AutoCloseable {
  /** Subdirectory of a remote primary's local directory that caches remote data files. */
  public static final String REMOTE_CACHE_DIR = ShardRecovery.REMOTE_CACHE_DIR;

  /**
   * Present while a restore replaces the directory's state; a Db never opens half-restored state
   * (which could look like an empty Db).
   */
  public static final String RESTORE_MARKER = ShardRecovery.RESTORE_MARKER;

  private final ShardState state;
  private final CompactionScheduler compactor;
  private final Flusher flusher;
  private final WritePath writes;
  private final BucketExpansion expansion;
  // Null unless the config shares a MemoryPool.
  private final MemoryPool.Member pooled;
  // What the reads below use of the shard state, under the names they had in Db.
  private final VersionSet versions;
  private final ValueLoader loader;
  private final Clock clock;
  private final PointReader pointReader;
  // Follows state.layouts(); set with it on each schema change.
  private volatile Layouts layouts;

  /**
   * With {@code remotePrimary} set, the working files and manifests live there and {@code dir} is
   * the local directory that stages new files and caches remote ones. A null {@code cache} means
   * the config's memory pool's cache, or a cache of the Db's own.
   */
  private Db(
      Path dir,
      Config config,
      BlockCache cache,
      LongUnaryOperator cacheIds,
      Storage sharedVolume,
      Storage remotePrimary) {
    MemoryPool pool = config.memoryPool();
    BlockCache own = null;
    if (cache == null && pool != null) {
      cache = pool.cache();
      cacheIds = pool.cacheIds();
    } else if (cache == null) {
      own = new BlockCache(config.blockCacheSize());
      cache = own;
    }
    state = ShardRecovery.recover(dir, config, cache, cacheIds, sharedVolume, remotePrimary);
    versions = state.versions;
    loader = state.loader;
    clock = state.clock;
    layouts = state.layouts();
    pointReader = new PointReader(versions, clock, loader);
    compactor = new CompactionScheduler(state);
    flusher = new Flusher(state, compactor);
    state.rotation(this::sealForScans);
    if (own != null && config.lendIdleMemtableBuffers() && config.blockCacheSize() > 0) {
      flusher.lendIdleBuffers(own);
    }
    if (pool != null) {
      flusher.sharing(pool);
      pooled = pool.join(new PoolShard(state, flusher));
    } else {
      pooled = null;
    }
    writes = new WritePath(state, flusher, pool, pooled);
    expansion = new BucketExpansion(state, compactor, flusher);
    state.mutex.lock();
    try {
      compactor.maybeSchedule();
    } finally {
      state.mutex.unlock();
    }
    if (config.backgroundMetadata()) {
      BackgroundMetadata.load(state);
    }
  }

  /** Opens (creating if needed) the Db stored in {@code dir}. */
  public static Db open(Path dir, Config config) {
    return open(dir, config, null);
  }

  /**
   * Opens (creating if needed) the Db stored in {@code dir} whose restored files may lie in place
   * on {@code sharedVolume} (a snapshot volume on any storage; null for none). The caller keeps
   * {@code sharedVolume} open until the Db is closed and then closes it.
   */
  public static Db open(Path dir, Config config, Storage sharedVolume) {
    if (dir == null || config == null) {
      throw new IllegalArgumentException("dir and config must not be null");
    }
    return new Db(dir, config, null, n -> n, sharedVolume, null);
  }

  /**
   * Opens a Db that shares {@code cache} with other Dbs (readers over many shards). Block cache
   * keys are built from file numbers, which repeat across shards, so {@code cacheIds} maps this
   * Db's file numbers to ids unique among all users of the cache.
   */
  public static Db openSharingCache(
      Path dir, Config config, BlockCache cache, LongUnaryOperator cacheIds) {
    return openSharingCache(dir, config, cache, cacheIds, null);
  }

  /** {@link #openSharingCache} for a Db whose files may lie in place on {@code sharedVolume}. */
  public static Db openSharingCache(
      Path dir, Config config, BlockCache cache, LongUnaryOperator cacheIds, Storage sharedVolume) {
    if (dir == null || config == null || cache == null || cacheIds == null) {
      throw new IllegalArgumentException("dir, config, cache and cacheIds must not be null");
    }
    return new Db(dir, config, cache, cacheIds, sharedVolume, null);
  }

  /**
   * Opens (creating if needed) the Db whose working files and manifests live on {@code primary}
   * (object storage or any other storage), with {@code localDir} staging new files and caching
   * remote ones (see {@code remote-cache.*}). Only one writer works on a primary at a time: opening
   * one fences off the previous writer, whose next publication fails. The caller keeps {@code
   * primary} open until the Db is closed and then closes it.
   */
  public static Db open(Storage primary, Path localDir, Config config) {
    if (primary == null || localDir == null || config == null) {
      throw new IllegalArgumentException("primary, localDir and config must not be null");
    }
    return new Db(localDir, config, null, n -> n, null, primary);
  }

  /**
   * Opens the Db whose working files live on the volume set's first primary volume. A local
   * directory ({@code file:} URI) holds them directly. On any other storage the Db keeps them and
   * its manifests there, and uses the set's CACHE volume to stage and cache them (see {@link
   * #open(Storage, Path, Config)}). Snapshot volumes are used through {@link
   * io.cobble.snapshot.SnapshotManager}. When a restore left the Db reading files in place on one
   * of the set's volumes, the Db opens that volume's storage (with its options) and closes it on
   * close.
   */
  public static Db open(VolumeSet volumes, Config config) {
    if (volumes == null || config == null) {
      throw new IllegalArgumentException("volumes and config must not be null");
    }
    Volume primary = volumes.primaries().get(0);
    if (!"file".equals(primary.uri().getScheme())) {
      // VolumeSet guarantees a local CACHE volume next to a remote primary.
      Path local = Paths.get(volumes.cache().orElseThrow().uri());
      Storage storage;
      try {
        storage = primary.open();
      } catch (IOException e) {
        throw new CobbleException("cannot open primary volume " + primary.uri(), e);
      }
      try {
        Db db = open(storage, local, config);
        db.state.ownedVolume(storage);
        return db;
      } catch (RuntimeException e) {
        ShardState.closeQuietly(storage);
        throw e;
      }
    }
    Path dir = Paths.get(primary.uri());
    Optional<Volume> inPlace = ExternalFiles.read(dir).flatMap(x -> x.remoteVolumeIn(volumes));
    if (inPlace.isEmpty()) {
      return open(dir, config, null);
    }
    Storage shared;
    try {
      shared = inPlace.get().open();
    } catch (IOException e) {
      throw new CobbleException("cannot open volume " + inPlace.get().uri(), e);
    }
    try {
      Db db = open(dir, config, shared);
      db.state.ownedVolume(shared);
      return db;
    } catch (RuntimeException e) {
      ShardState.closeQuietly(shared);
      throw e;
    }
  }

  // ---------------------------------------------------------------- validation

  private void checkOpen() {
    state.checkOpen();
  }

  private void checkBucket(int bucket) {
    state.ownership.checkBucket(bucket);
  }

  private static void checkKey(byte[] key) {
    RequestChecks.checkKey(key);
  }

  private static int[] checkProjection(ColumnLayout layout, Object options, int[] projection) {
    return RequestChecks.checkProjection(layout, options, projection);
  }

  /** Inclusive [lo, hi] pairs of the buckets this shard owns (config, or as shrunk since). */
  public int[] ownedBucketRanges() {
    return state.ownership.ranges().clone();
  }

  /**
   * Gives up every bucket outside {@code pairs} (inclusive [lo, hi] pairs, each inside an owned
   * range). Files stay as they are: reads of other buckets are rejected, and compaction drops their
   * rows. Durable on return.
   */
  public void shrinkBuckets(int[] pairs) {
    checkOpen();
    state.mutex.lock();
    try {
      state.ownership.shrink(pairs);
    } finally {
      state.mutex.unlock();
    }
  }

  /**
   * Takes over the buckets {@code pairs} (inclusive [lo, hi] pairs this shard does not own) with
   * {@code adopted}: tables and value logs of other shards' snapshots on {@code volume}, used where
   * they lie; only a table that also holds rows of buckets this shard owns (given up by its source,
   * not yet compacted away) is copied without them. Rescale's {@code expandBuckets(SnapshotManager,
   * ...)} checks the sources and holds the export lease that keeps the files; call that rather than
   * this.
   *
   * <p>Rows of those buckets that this shard's own files still hold from before it gave them up are
   * dropped first (each such file is rewritten where it lies), so they can never resurface under
   * the adopted data. Adopted tables keep their order within their source: each source level goes
   * to the shallowest free level below the previous one where it overlaps no file, or, if there is
   * none, every table of that source goes to L0 in read order. Durable on return; a crash part way
   * reopens with all of it or none of it ({@link PendingExpansion}). The caller keeps {@code
   * volume} open until the Db is closed (unless the Db opened that volume itself).
   *
   * @throws IllegalArgumentException if a range is invalid or already owned, the Db already reads
   *     files in place on another volume, or a value-log number names two different files
   */
  public void expandBuckets(int[] pairs, AdoptedFiles adopted, Storage volume) {
    expansion.expand(pairs, adopted, volume);
  }

  // ---------------------------------------------------------------- writes

  public void put(int bucket, String family, byte[] key, int column, byte[] value) {
    put(bucket, family, key, column, value, WriteBatch.DEFAULT_TTL);
  }

  public void put(int bucket, String family, byte[] key, int column, byte[] value, long ttlMillis) {
    writes.writeOne(WriteBatch.Kind.PUT, bucket, family, key, column, value, ttlMillis);
  }

  public void merge(int bucket, String family, byte[] key, int column, byte[] operand) {
    merge(bucket, family, key, column, operand, WriteBatch.DEFAULT_TTL);
  }

  public void merge(
      int bucket, String family, byte[] key, int column, byte[] operand, long ttlMillis) {
    writes.writeOne(WriteBatch.Kind.MERGE, bucket, family, key, column, operand, ttlMillis);
  }

  public void delete(int bucket, String family, byte[] key, int column) {
    writes.writeOne(WriteBatch.Kind.DELETE, bucket, family, key, column, null, 0);
  }

  public void deleteRow(int bucket, String family, byte[] key) {
    writes.writeOne(WriteBatch.Kind.DELETE_ROW, bucket, family, key, 0, null, 0);
  }

  public void write(WriteBatch batch) {
    writes.write(batch);
  }

  /**
   * Puts one column of {@code count} rows of one bucket, with the default TTL, as one write: row
   * {@code i}'s key is {@code keys[keyEnds[i - 1]..keyEnds[i])} and its value {@code
   * values[valueEnds[i - 1]..valueEnds[i])} (row 0 starts at 0), so a caller encodes a batch into
   * reused buffers and the engine takes its lock and checks for room once. Each row reads like
   * {@link #put}; rows apply in order, and a concurrent reader may see some rows of the batch
   * before others.
   */
  public void putColumns(
      int bucket,
      String family,
      int column,
      byte[] keys,
      int[] keyEnds,
      byte[] values,
      int[] valueEnds,
      int count) {
    writes.putColumns(bucket, family, column, keys, keyEnds, values, valueEnds, count);
  }

  /**
   * Puts every column of one row as a single delta, with the default TTL: column {@code i}'s value
   * is {@code values[columnEnds[i - 1]..columnEnds[i])} (column 0 starts at 0) and the key is
   * {@code key[0..keyLen)}, so a caller can encode its rows into reused buffers. It reads like a
   * {@link WriteBatch} of one put per column, but stores one whole-row delta that needs no folding
   * and replaces the key's older rows outright.
   */
  public void putRow(
      int bucket, String family, byte[] key, int keyLen, byte[] values, int[] columnEnds) {
    writes.putRow(bucket, family, key, keyLen, values, columnEnds);
  }

  // ---------------------------------------------------------------- flush and compaction

  /**
   * Seals the active memtable for the scans that found it no longer written (under the mutex), and
   * then lets compaction fold level 0: the shard is read now, not written.
   */
  private boolean sealForScans() {
    if (!flusher.rotateIfRoom()) {
      return false;
    }
    compactor.settleLevel0();
    return true;
  }

  /**
   * Lets {@code filter} drop values during the compactions that start from now on (null removes
   * it). The filter is not persisted: set it again after every open.
   */
  public void setCompactionFilter(CompactionFilter filter) {
    state.compactionFilter = filter;
  }

  /** Flushes, then compacts every tree until each lives in a single level. */
  public void compactAll() {
    flush();
    compactor.compactAll();
  }

  /**
   * Flushes, then merges every tree's level-0 files into level 1 in the caller's thread, so that a
   * point read checks one file per level; deeper levels are left as they are, so the work is
   * bounded by level 0 and the level-1 files it overlaps. Returns false when {@code stop} (polled
   * every few thousand rows of a merge) became true or the Db closed: the merge in progress is
   * discarded, the tree is as before it and nothing is lost. Background compactions keep running
   * meanwhile; one of the same tree is waited for. A caller that stops on its thread's interrupt
   * should close the Db afterwards: an interrupt during a read also closes NIO file channels.
   */
  public boolean compactLevel0(BooleanSupplier stop) {
    flush();
    return compactor.compactLevel0(stop);
  }

  /**
   * Rewrites, where it lies, every table file whose bucket span crosses a bucket this shard does
   * not own (given up by a shrink), keeping only the owned rows; with {@code
   * compaction.foreign-bucket-cleanup} on, background compaction does the same when nothing else is
   * due. Afterwards each file lies within one owned range, so a later rescale can hand the files to
   * new shards as they are. Memtables are not flushed: they never hold rows of buckets that are not
   * owned for long, as writes to them are rejected.
   */
  public void cleanupForeignBuckets() {
    checkOpen();
    compactor.cleanupForeignBuckets();
  }

  /**
   * Tells the Db that a durable snapshot of its own (or a checkpoint its owner confirmed) names the
   * files {@code fileNumbers}. Files the Db reads in place from the snapshot it was opened or
   * expanded from are not its own until then, and the background cleanup of given-up buckets leaves
   * them as they are, so that the first snapshot after a restore or rescale can refer to them
   * instead of uploading rewrites; from this call on it may rewrite them. Numbers of files the Db
   * wrote itself are ignored, and so is the call on a closed Db. {@code SnapshotManager} calls this
   * after each publication.
   */
  public void confirmOwned(Collection<Long> fileNumbers) {
    compactor.confirmOwned(fileNumbers);
  }

  /**
   * Waits until no compaction is running or due, then until every file they made dead is deleted
   * (tests and benchmarks use this). When it returns, and no cursor or snapshot still pins an older
   * version, the directory holds exactly the live data files: those of the current version and
   * those the previous (fallback) manifest lists. A Db reopened after a crash is in that state once
   * this returns too: open removes every other file before it returns, and the compactions it
   * starts are waited for here.
   */
  public void waitForCompactions() {
    compactor.awaitIdle();
  }

  /** Seals the active memtable (if not empty) and waits until every memtable is flushed. */
  public void flush() {
    checkOpen();
    flusher.flushAll();
  }

  /**
   * Seals everything written before this call without waiting for the flush: the future completes
   * with a pinned version (the caller must {@link Version#unref()} it) whose files hold exactly
   * those writes, once they are flushed. Later writes go to newer memtables, which are flushed
   * after the sealed ones, so they are not in that version's files. What a snapshot captures.
   */
  public CompletableFuture<Version> sealForSnapshot() {
    checkOpen();
    return flusher.sealForSnapshot();
  }

  // ---------------------------------------------------------------- schema

  public Schema schema() {
    return state.layouts().schema();
  }

  public void createFamily(String name, List<ColumnSpec> columns) {
    changeSchema(schema().addFamily(name, columns));
  }

  /**
   * Gives the tables {@code family} writes from now on a prefix filter over the first {@code
   * prefixLength} bytes of each row key (0 = none), so a scan whose range lies within one such
   * prefix skips, without a seek, every table that holds no key with it. Worth it for a family
   * whose rows are grouped under fixed-length prefixes and read by prefix scans. Not persisted:
   * each table records its own prefix length, so tables keep their filter whatever a later open
   * sets.
   *
   * @throws IllegalArgumentException when {@code prefixLength} is negative
   */
  public void prefixFilter(String family, int prefixLength) {
    checkOpen();
    if (prefixLength < 0) {
      throw new IllegalArgumentException(
          "prefix filter length of family " + family + " must be >= 0, was " + prefixLength);
    }
    int id = layouts.require(family).familyId();
    // Table keys start with the two bucket bytes.
    state.prefixFilterLength(id, prefixLength == 0 ? 0 : 2 + prefixLength);
  }

  public void addColumn(String family, ColumnSpec column) {
    changeSchema(schema().addColumn(family, column));
  }

  public void dropColumn(String family, String column) {
    changeSchema(schema().dropColumn(family, column));
  }

  private void changeSchema(Schema next) {
    checkOpen();
    Layouts resolved = new Layouts(next, state.config.mergeOperatorResolver());
    state.mutex.lock();
    try {
      Schema current = state.layouts().schema();
      if (next.id() != current.id() + 1) {
        throw new IllegalStateException("concurrent schema change; retry");
      }
      versions.apply(new VersionEdit().schema(next));
      state.layouts(resolved);
      layouts = resolved;
    } finally {
      state.mutex.unlock();
    }
  }

  // ---------------------------------------------------------------- reads

  public byte[][] get(int bucket, String family, byte[] key) {
    return get(bucket, family, key, ReadOptions.DEFAULT);
  }

  /** The row's (projected) column values, or null when none of them has a live value. */
  public byte[][] get(int bucket, String family, byte[] key, ReadOptions options) {
    checkOpen();
    checkBucket(bucket);
    checkKey(key);
    Layouts l = layouts;
    ColumnLayout layout = l.require(family);
    int[] projection =
        checkProjection(layout, options, options == null ? null : options.projection());
    return pointReader.get(layout, bucket, key, projection);
  }

  /**
   * One column's value, or null when it has no live value: what {@code get} with a projection of
   * that column returns in its only slot, without the array around it (a point read of a one-column
   * family allocates only the value it returns).
   */
  public byte[] getColumn(int bucket, String family, byte[] key, int column) {
    checkOpen();
    checkBucket(bucket);
    checkKey(key);
    ColumnLayout layout = layouts.require(family);
    layout.checkColumn(column);
    return pointReader.getColumn(layout, bucket, key, column);
  }

  /**
   * As {@link #getColumn}, without allocating the value where that can be avoided: when the column
   * has a live value, {@code sink} is called once with it and this returns true. The bytes are
   * valid only during that call and may be the stored bytes themselves (a memtable's arena, a
   * pinned cached block): the sink decodes or copies them, must neither change nor keep them, and
   * must not call this Db.
   */
  public boolean readColumn(int bucket, String family, byte[] key, int column, ValueSink sink) {
    checkOpen();
    checkBucket(bucket);
    checkKey(key);
    ColumnLayout layout = layouts.require(family);
    layout.checkColumn(column);
    return pointReader.readColumn(layout, bucket, key, column, Objects.requireNonNull(sink));
  }

  /**
   * As {@link #get} with a projection of {@code columns}, without the array of copied values: each
   * projected column with a live value is handed to {@code sink} (with its index in {@code
   * columns}), and this returns whether there was any. The bytes are valid only during the call and
   * may be the stored bytes themselves (a memtable's arena, a pinned cached block): the sink
   * decodes or copies them, must neither change nor keep them, and must not call this Db.
   */
  public boolean readColumns(
      int bucket, String family, byte[] key, int[] columns, ColumnsSink sink) {
    checkOpen();
    checkBucket(bucket);
    checkKey(key);
    ColumnLayout layout = layouts.require(family);
    int[] projection = checkProjection(layout, columns, Objects.requireNonNull(columns));
    return pointReader.readColumns(layout, bucket, key, projection, Objects.requireNonNull(sink));
  }

  /**
   * {@code columns} of {@code family} resolved and checked once, for {@link #readColumns(int,
   * ColumnsRead, byte[], ColumnsSink)}.
   *
   * @throws IllegalArgumentException when the family is unknown or a column is not one of its
   */
  public ColumnsRead prepareColumns(String family, int[] columns) {
    checkOpen();
    return new ColumnsRead(family, Objects.requireNonNull(columns), layouts);
  }

  /**
   * As {@link #readColumns(int, String, byte[], int[], ColumnsSink)} with the family and columns of
   * {@code read}, without resolving them again.
   */
  public boolean readColumns(int bucket, ColumnsRead read, byte[] key, ColumnsSink sink) {
    checkOpen();
    checkBucket(bucket);
    checkKey(key);
    ColumnLayout layout = read.layoutIn(layouts);
    return pointReader.readColumns(
        layout, bucket, key, read.columns(), Objects.requireNonNull(sink));
  }

  public List<byte[][]> multiGet(
      int bucket, String family, List<byte[]> keys, ReadOptions options) {
    checkOpen();
    checkBucket(bucket);
    ColumnLayout layout = layouts.require(family);
    int[] projection =
        checkProjection(layout, options, options == null ? null : options.projection());
    keys.forEach(Db::checkKey);
    return pointReader.multiGet(layout, bucket, keys, projection);
  }

  /**
   * Scans rows of one bucket with keys in {@code [start, end)} (null = unbounded), in key order.
   *
   * <p>The cursor reads one consistent view: the Db as it was when this method was called, like a
   * RocksDB iterator. Every write that completed before the call is in it; no write made after it
   * returns is, whether a new key, an overwrite, a delete or a merge, with any {@code
   * memtable.type}, and also when flushes, compactions or an adaptive memtable's change of index
   * run while the cursor is open. A write running concurrently with the call shows entirely or not
   * at all for each row it changes. TTL expiry is judged against the time of the call as well. The
   * view pins the memtables and files it reads: close the cursor (it also closes itself once
   * exhausted) to release them for deletion.
   *
   * @throws IllegalArgumentException when {@code start} sorts after {@code end} (equal keys give an
   *     empty scan), the bucket is not owned by this shard, the family is unknown or the projection
   *     names a column the family does not have
   */
  public ScanCursor scan(int bucket, String family, byte[] start, byte[] end, ScanOptions options) {
    return openScan(bucket, family, start, end, false, options);
  }

  /**
   * {@link #scan} over the rows of the bucket whose keys start with {@code prefix}: the same rows
   * as a scan from {@code prefix} to its successor, with both bounds built in buffers the scan
   * reuses (a state backend's per-key scans would otherwise allocate them each time).
   *
   * @throws IllegalArgumentException as {@link #scan} does
   */
  public ScanCursor scanPrefix(int bucket, String family, byte[] prefix, ScanOptions options) {
    return openScan(bucket, family, Objects.requireNonNull(prefix, "prefix"), null, true, options);
  }

  private ScanCursor openScan(
      int bucket, String family, byte[] start, byte[] end, boolean prefix, ScanOptions options) {
    checkOpen();
    checkBucket(bucket);
    ColumnLayout layout = layouts.require(family);
    int[] projection =
        checkProjection(layout, options, options == null ? null : options.projection());
    if (start != null && end != null && Bytes.compare(start, end) > 0) {
      throw new IllegalArgumentException("scan start is after end");
    }
    Version v = versions.acquire();
    try {
      return new ScanCursor(
          v, loader, clock, layout, bucket, start, end, prefix, projection, options);
    } catch (RuntimeException e) {
      v.unref();
      throw e;
    }
  }

  /**
   * Whether the bucket holds no row with a key in {@code [start, end)} (null = unbounded): exactly
   * when a {@link #scan} opened now over that range would return no row, but cheaper. When the
   * newest source holding a key of the range starts it with a live put, the older sources are not
   * read ({@link RangeProbe}).
   *
   * @throws IllegalArgumentException as {@link #scan} does
   */
  public boolean isEmpty(int bucket, String family, byte[] start, byte[] end) {
    checkOpen();
    checkBucket(bucket);
    ColumnLayout layout = layouts.require(family);
    if (start != null && end != null && Bytes.compare(start, end) > 0) {
      throw new IllegalArgumentException("scan start is after end");
    }
    Version v = versions.acquire();
    try {
      return !RangeProbe.anyLive(v, layout, loader, bucket, start, end, clock);
    } finally {
      v.unref();
    }
  }

  /**
   * Whether the bucket holds no row whose key starts with the first {@code prefixLength} bytes of
   * {@code prefix}: {@link #isEmpty(int, String, byte[], byte[])} over that prefix's keys, for a
   * caller that builds its prefix in a reused buffer (a state backend's per-key probe). The probe's
   * range keys are built in buffers of the calling thread, so it allocates nothing.
   *
   * @throws IllegalArgumentException as {@link #scan} does, or when {@code prefixLength} is not
   *     within {@code prefix}
   */
  public boolean isEmptyWithPrefix(int bucket, String family, byte[] prefix, int prefixLength) {
    checkOpen();
    checkBucket(bucket);
    ColumnLayout layout = layouts.require(family);
    if (prefixLength < 0 || prefixLength > prefix.length) {
      throw new IllegalArgumentException(
          "prefix length " + prefixLength + " outside a " + prefix.length + "-byte buffer");
    }
    Version v = versions.acquire();
    try {
      return !RangeProbe.anyLiveWithPrefix(v, layout, loader, bucket, prefix, prefixLength, clock);
    } finally {
      v.unref();
    }
  }

  /**
   * Declares that nothing will change this Db again (no writes, flushes, compactions or schema
   * changes) until it closes, as for a reader of a snapshot: point reads then use its one version
   * without counting references and skip its empty memtables. Compactions already running finish
   * first and none starts afterwards; a flush attempted afterwards fails, and closing it flushes
   * nothing.
   */
  public void freeze() {
    checkOpen();
    state.mutex.lock();
    try {
      compactor.stop();
      pointReader.freeze(versions.freeze());
    } finally {
      state.mutex.unlock();
    }
  }

  /** The version set, for snapshot and rescale code that resolves and adopts files. */
  public VersionSet versionSet() {
    return versions;
  }

  // ---------------------------------------------------------------- metrics and close

  public DbMetrics metrics() {
    Version v = versions.acquire();
    try {
      int files = 0;
      long bytes = 0;
      int[] perLevel = new int[state.config.maxLevels()];
      for (Tree t : v.trees()) {
        for (int level = 0; level < t.levelCount(); level++) {
          for (FileMeta f : t.level(level)) {
            files++;
            bytes += f.size();
            perLevel[level]++;
          }
        }
      }
      long vlogBytes = 0;
      for (ValueLogFile f : v.vlogFiles().values()) {
        vlogBytes += f.size();
      }
      long mem = v.active().approximateBytes();
      for (MemTable m : v.immutables()) {
        mem += m.approximateBytes();
      }
      return new DbMetrics(
          flusher.flushes(),
          flusher.bytes(),
          compactor.compactions(),
          compactor.trivialMoves(),
          compactor.expiredDrops(),
          compactor.bytesIn(),
          compactor.bytesOut(),
          writes.stallWaits(),
          writes.stallNanos() / 1_000_000,
          state.cache.hits(),
          state.cache.misses(),
          state.cache.usage(),
          files,
          bytes,
          v.vlogFiles().size(),
          vlogBytes,
          mem,
          v.immutables().size(),
          perLevel);
    } finally {
      v.unref();
    }
  }

  public Path directory() {
    return state.dir;
  }

  /** The local cache of a remote primary's files; null when the working files are local. */
  public DiskCache remoteCache() {
    return state.remote == null ? null : state.remote.storage().cache();
  }

  public Config config() {
    return state.config;
  }

  /**
   * Makes the local tables and value logs numbered {@code numbers} durable: fsyncs those written
   * without fsync under {@code fsync.policy=snapshot} and not fsynced since, then their directory.
   * A snapshot calls it for the files it hands over in place (hard-linked or referenced where they
   * lie) before the snapshot counts as complete; files it copies elsewhere need nothing. Returns
   * how many files it fsynced (0 under {@code fsync.policy=publish}, where every file already is).
   */
  public int makeDurable(Iterable<Long> numbers) {
    return state.deferredSync.sync(numbers);
  }

  /** The numbers of the local files written without fsync that no {@link #makeDurable} synced. */
  public java.util.Set<Long> filesAwaitingSync() {
    return state.deferredSync.pending();
  }

  /** Flushes memtables, waits for running compactions and releases the directory. */
  @Override
  public void close() {
    if (state.closed()) {
      return;
    }
    Throwable failure = null;
    try {
      // A frozen Db was not written since it froze, and its version cannot change to flush.
      if (state.backgroundError() == null && !versions.frozen()) {
        flusher.flushAll();
      }
    } catch (RuntimeException e) {
      failure = e;
    }
    state.mutex.lock();
    try {
      state.markClosed();
      flusher.failSealWaiters(new IllegalStateException("Db " + state.dir + " is closed"));
      compactor.awaitStopped();
    } finally {
      state.mutex.unlock();
    }
    flusher.shutdown();
    compactor.shutdown();
    versions.close();
    if (pooled != null) {
      pooled.leave();
    }
    Storage owned = state.ownedVolume();
    if (owned != null) {
      ShardState.closeQuietly(owned);
    }
    state.lock.close();
    if (failure != null) {
      throw new CobbleException("Db " + state.dir + " closed but its final flush failed", failure);
    }
  }
}
