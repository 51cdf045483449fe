package io.cobble;

import io.cobble.cache.BlockCache;
import io.cobble.cache.CachedStorage;
import io.cobble.cache.DiskCache;
import io.cobble.compaction.Compaction;
import io.cobble.compaction.CompactionAbandoned;
import io.cobble.compaction.CompactionJob;
import io.cobble.compaction.CompactionPicker;
import io.cobble.compaction.OutputWriter;
import io.cobble.iterator.KvIterator;
import io.cobble.memtable.AdaptiveMemTable;
import io.cobble.memtable.HashMemTable;
import io.cobble.memtable.MemTable;
import io.cobble.memtable.RowCombiner;
import io.cobble.memtable.SkipListMemTable;
import io.cobble.memtable.VecMemTable;
import io.cobble.merge.MergeOperator;
import io.cobble.read.PointReader;
import io.cobble.row.ColumnLayout;
import io.cobble.row.Layouts;
import io.cobble.row.RowState;
import io.cobble.row.ValueLoader;
import io.cobble.schema.ColumnSpec;
import io.cobble.schema.Schema;
import io.cobble.sst.Table;
import io.cobble.sst.TableOptions;
import io.cobble.sst.TableReadOptions;
import io.cobble.storage.Storage;
import io.cobble.storage.Volume;
import io.cobble.storage.VolumeSet;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import io.cobble.util.Bytes;
import io.cobble.util.DirectIo;
import io.cobble.version.AdoptedFiles;
import io.cobble.version.ExternalFiles;
import io.cobble.version.FileMeta;
import io.cobble.version.Manifest;
import io.cobble.version.OwnedRanges;
import io.cobble.version.PendingExpansion;
import io.cobble.version.RemotePrimary;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import io.cobble.version.VersionEdit;
import io.cobble.version.VersionSet;
import io.cobble.version.WriterFencedException;
import io.cobble.vlog.ValueLogFile;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntPredicate;
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
 */
public final class Db implements AutoCloseable {
  private static final String LOCK_FILE = "LOCK";

  /** Subdirectory of a remote primary's local directory that caches remote data files. */
  public static final String REMOTE_CACHE_DIR = "remote-cache";

  /**
   * Present while a restore replaces the directory's state; a Db never opens half-restored state
   * (which could look like an empty Db).
   */
  public static final String RESTORE_MARKER = "RESTORING";

  /** Compaction copies values out of value logs whose live share fell below this. */
  private static final double VLOG_REWRITE_RATIO = 0.5;

  private final Path dir;
  private final Config config;
  private final Clock clock;
  private final FileChannel lockChannel;
  private final FileLock fileLock;
  // A volume Db.open(VolumeSet, ...) opened for files used in place there; closed with the Db.
  private Storage ownedVolume;
  private final BlockCache cache;
  private final LongUnaryOperator cacheIds;
  private final DirectIo directIo;
  private final VersionSet versions;
  // The remote primary volume the working files live on; null when they live in dir.
  private final RemotePrimary remote;
  private final CompactionPicker picker;
  private final ReentrantLock mutex = new ReentrantLock();
  private final Condition changed = mutex.newCondition();
  private final ExecutorService flushExecutor;
  private final ExecutorService compactionExecutor;
  private final Set<Integer> compacting = new HashSet<>();
  private final ThreadLocal<Scratch> scratch = ThreadLocal.withInitial(Scratch::new);
  private final ThreadLocal<RowState[]> combineScratch =
      ThreadLocal.withInitial(() -> new RowState[] {new RowState(), new RowState()});
  private final RowCombiner memTableFold = new MemTableFold();
  private final ValueLoader loader;
  private final PointReader pointReader;
  private volatile Layouts layouts;
  private volatile int[] ownedRanges;
  private volatile boolean closed;
  private volatile Throwable backgroundError;
  // The last failure of a flush to a remote primary. Such a failure leaves the memtable in place
  // for the next flush to retry instead of disabling the Db; a successful flush clears it. Under
  // the mutex.
  private Throwable flushFailure;
  private long flushFailures;
  private boolean flushScheduled;
  // Snapshots waiting for a sealed memtable's flush, completed with the version that installed it.
  // Under the mutex.
  private final Map<MemTable, List<CompletableFuture<Version>>> sealWaiters =
      new IdentityHashMap<>();
  private int runningCompactions;
  private long memtableIds;
  // With no history yet, start append-only: the first read or scan converts cheaply.
  private MemTableType nextAdaptiveType = MemTableType.VEC;

  private final AtomicLong flushes = new AtomicLong();
  private final AtomicLong flushBytes = new AtomicLong();
  private final AtomicLong compactions = new AtomicLong();
  private final AtomicLong trivialMoves = new AtomicLong();
  private final AtomicLong expiredDrops = new AtomicLong();
  private final AtomicLong compactionIn = new AtomicLong();
  private final AtomicLong compactionOut = new AtomicLong();
  private final AtomicLong stallWaits = new AtomicLong();
  private final AtomicLong stallNanos = new AtomicLong();

  /** Per-thread reusable buffers so reads and writes allocate only their results. */
  private static final class Scratch {
    final ByteWriter key = new ByteWriter(64);
    final ByteWriter row = new ByteWriter(128);

    /** Encodes the internal key (family id, bucket, user key) into {@link #key}. */
    ByteWriter key(ColumnLayout layout, int bucket, byte[] userKey) {
      return key(layout, bucket, userKey, userKey.length);
    }

    ByteWriter key(ColumnLayout layout, int bucket, byte[] userKey, int userKeyLen) {
      key.reset();
      key.writeByte(layout.familyId() >>> 8);
      key.writeByte(layout.familyId());
      key.writeByte(bucket >>> 8);
      key.writeByte(bucket);
      key.writeBytes(userKey, 0, userKeyLen);
      return key;
    }
  }

  private Db(Path dir, Config config, Storage sharedVolume) {
    this(dir, config, new BlockCache(config.blockCacheSize()), n -> n, sharedVolume, null);
  }

  private Db(
      Path dir, Config config, BlockCache cache, LongUnaryOperator cacheIds, Storage sharedVolume) {
    this(dir, config, cache, cacheIds, sharedVolume, null);
  }

  /**
   * With {@code remotePrimary} set, the working files and manifests live there and {@code dir} is
   * the local directory that stages new files and caches remote ones.
   */
  private Db(
      Path dir,
      Config config,
      BlockCache cache,
      LongUnaryOperator cacheIds,
      Storage sharedVolume,
      Storage remotePrimary) {
    this.cacheIds = cacheIds;
    this.dir = dir;
    this.config = config;
    this.clock = config.clock();
    try {
      Files.createDirectories(dir);
      lockChannel =
          FileChannel.open(
              dir.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new CobbleException("cannot open Db directory " + dir, e);
    }
    try {
      fileLock = lockChannel.tryLock();
    } catch (IOException | java.nio.channels.OverlappingFileLockException e) {
      closeQuietly(lockChannel);
      throw new CobbleException("Db directory " + dir + " is already open (LOCK is held)", e);
    }
    if (fileLock == null) {
      closeQuietly(lockChannel);
      throw new CobbleException("Db directory " + dir + " is already open by another process");
    }
    this.cache = cache;
    this.directIo =
        config.directIoEnabled()
            ? new DirectIo(config.directIoBufferSize(), config.directIoPoolMaxSize())
            : null;
    this.picker = new CompactionPicker(config);
    try {
      if (Files.exists(dir.resolve(RESTORE_MARKER))) {
        throw new CobbleException(
            "Db directory "
                + dir
                + " holds an interrupted restore ("
                + RESTORE_MARKER
                + " marker); run the restore again or delete the directory");
      }
      if (remotePrimary == null && Files.isDirectory(dir.resolve(REMOTE_CACHE_DIR))) {
        throw new IllegalArgumentException(
            "Db directory "
                + dir
                + " is the local cache of a Db whose primary volume is remote; open it with"
                + " Db.open(VolumeSet, Config) or Db.open(Storage, Path, Config) and that volume");
      }
      remote = remotePrimary == null ? null : openRemote(remotePrimary);
      Manifest.Recovered recovered = remote != null ? remote.recover() : Manifest.recover(dir);
      Manifest m = recovered.manifest;
      PendingExpansion.recover(dir, m);
      Schema schema = m == null ? Schema.initial() : m.schema;
      if (m != null && m.totalBuckets != config.totalBuckets()) {
        throw new IllegalArgumentException(
            "invalid total-buckets "
                + config.totalBuckets()
                + " for "
                + dir
                + ": the DB was created with "
                + m.totalBuckets
                + " and the bucket count is fixed");
      }
      layouts = new Layouts(schema, config.mergeOperatorResolver());
      versions =
          new VersionSet(
              dir,
              config.totalBuckets(),
              config.maxLevels(),
              m == null ? 1 : m.nextFileNumber,
              recovered.seq,
              schema,
              config.fsyncEnabled(),
              remote);
      loader = versions::loadValue;
      pointReader = new PointReader(versions, clock, loader);
      if (remote == null) {
        ExternalFiles.read(dir).ifPresent(x -> versions.adoptExternal(x.locate(sharedVolume, dir)));
      }
      ownedRanges = OwnedRanges.read(dir).orElse(config.bucketRanges());
      List<Tree> trees = recoverTrees(m, schema);
      versions.initialize(
          newMemTable(),
          trees,
          m == null ? Collections.emptyList() : m.vlogs,
          recovered.previousFiles);
      // A new writer of a remote primary publishes at once: from then on the writer it replaced
      // can publish nothing, and the orphan sweep below cannot race its uploads into a manifest.
      if (m == null || remote != null) {
        mutex.lock();
        try {
          versions.apply(new VersionEdit().schema(schema));
        } finally {
          mutex.unlock();
        }
      }
      deleteOrphans();
    } catch (RuntimeException e) {
      closeQuietly(lockChannel);
      throw e;
    }
    flushExecutor = Executors.newSingleThreadExecutor(daemon("cobble-flush"));
    compactionExecutor =
        Executors.newFixedThreadPool(config.compactionThreads(), daemon("cobble-compaction"));
    mutex.lock();
    try {
      maybeScheduleCompactions();
    } finally {
      mutex.unlock();
    }
  }

  private RemotePrimary openRemote(Storage primary) {
    DiskCache disk =
        DiskCache.open(
            dir.resolve(REMOTE_CACHE_DIR),
            primary.uri().toString(),
            config.remoteCacheSize(),
            config.remoteCacheChunkSize());
    return RemotePrimary.open(new CachedStorage(primary, disk));
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
    return new Db(dir, config, sharedVolume);
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
    return new Db(dir, config, cache, cacheIds, sharedVolume);
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
    return new Db(localDir, config, new BlockCache(config.blockCacheSize()), n -> n, null, primary);
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
        db.ownedVolume = storage;
        return db;
      } catch (RuntimeException e) {
        closeQuietly(storage);
        throw e;
      }
    }
    Path dir = Paths.get(primary.uri());
    Optional<Volume> inPlace = ExternalFiles.read(dir).flatMap(x -> x.remoteVolumeIn(volumes));
    if (inPlace.isEmpty()) {
      return new Db(dir, config, null);
    }
    Storage shared;
    try {
      shared = inPlace.get().open();
    } catch (IOException e) {
      throw new CobbleException("cannot open volume " + inPlace.get().uri(), e);
    }
    try {
      Db db = new Db(dir, config, shared);
      db.ownedVolume = shared;
      return db;
    } catch (RuntimeException e) {
      closeQuietly(shared);
      throw e;
    }
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // Best effort during failure handling.
    }
  }

  private List<Tree> recoverTrees(Manifest m, Schema schema) {
    int slots = new Layouts(schema, config.mergeOperatorResolver()).familySlots();
    List<List<List<FileMeta>>> levels = new ArrayList<>();
    for (int f = 0; f < slots; f++) {
      List<List<FileMeta>> l = new ArrayList<>();
      for (int i = 0; i < config.maxLevels(); i++) {
        l.add(new ArrayList<>());
      }
      levels.add(l);
    }
    List<Table> opened = new ArrayList<>();
    try {
      if (m != null) {
        for (Manifest.FileEntry e : m.files) {
          if (e.level >= config.maxLevels()) {
            throw new IllegalArgumentException(
                "invalid compaction.max-levels "
                    + config.maxLevels()
                    + ": the DB in "
                    + dir
                    + " has files at level "
                    + e.level);
          }
          Table t = openTable(e.number, e.level, e.size);
          opened.add(t);
          levels
              .get(e.family)
              .get(e.level)
              .add(new FileMeta(e.number, e.family, e.size, e.properties, t));
        }
      }
    } catch (RuntimeException ex) {
      for (Table t : opened) {
        t.close();
      }
      throw ex;
    }
    List<Tree> trees = new ArrayList<>();
    for (List<List<FileMeta>> l : levels) {
      for (int i = 1; i < l.size(); i++) {
        l.get(i).sort((a, b) -> Bytes.compare(a.smallest(), b.smallest()));
      }
      trees.add(new Tree(l));
    }
    return trees;
  }

  /** Opens a table; {@code size} comes from the manifest, or is -1 for a file just written. */
  private Table openTable(long number, int level, long size) {
    MetadataCacheMode mode = config.metadataCacheMode();
    boolean pin = mode != MetadataCacheMode.OFF && level <= config.pinnedMetadataMaxLevel();
    TableReadOptions options =
        TableReadOptions.builder()
            .pinTopIndex(pin)
            .pinPartitions(config.pinPartitions())
            .lazyMetadata(mode == MetadataCacheMode.LAZY)
            .directIo(directIo)
            .build();
    return Table.open(
        versions.tableFile(number), size, cacheIds.applyAsLong(number), cache, options);
  }

  /**
   * Removes files neither the newest nor the previous (fallback) manifest refers to: leftovers of
   * interrupted flushes and compactions, or of a corrupt newest manifest the Db did not open from.
   */
  private void deleteOrphans() {
    if (remote != null) {
      Set<Long> numbers = new HashSet<>(versions.previousManifestFiles());
      Version v = versions.current();
      for (Tree t : v.trees()) {
        for (FileMeta f : t.allFiles()) {
          numbers.add(f.number());
        }
      }
      numbers.addAll(v.vlogs());
      remote.sweep(numbers);
    }
    Set<String> live = new HashSet<>();
    // With a remote primary nothing in dir is live: each file moves into the cache once uploaded.
    if (remote == null) {
      for (long n : versions.previousManifestFiles()) {
        live.add(versions.tablePath(n).getFileName().toString());
        live.add(versions.vlogPath(n).getFileName().toString());
      }
      Version v = versions.current();
      for (Tree t : v.trees()) {
        for (FileMeta f : t.allFiles()) {
          live.add(versions.tablePath(f.number()).getFileName().toString());
        }
      }
      for (Long n : v.vlogs()) {
        live.add(versions.vlogPath(n).getFileName().toString());
      }
    }
    try (java.util.stream.Stream<Path> s = Files.list(dir)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        String name = p.getFileName().toString();
        boolean data = name.endsWith(".sst") || name.endsWith(".vlog") || name.endsWith(".tmp");
        if (data && !live.contains(name)) {
          Files.deleteIfExists(p);
        }
      }
    } catch (IOException e) {
      throw new CobbleException("cannot clean up " + dir, e);
    }
  }

  // ---------------------------------------------------------------- memtables

  private MemTable newMemTable() {
    long id = ++memtableIds;
    switch (config.memtableType()) {
      case SKIPLIST:
        return new SkipListMemTable(id, memTableFold);
      case HASH:
        return new HashMemTable(id, memTableFold);
      case VEC:
        return new VecMemTable(id, memTableFold);
      default:
        return new AdaptiveMemTable(id, memTableFold, nextAdaptiveType);
    }
  }

  /** Memtable row fold; memtable rows never hold value-log pointers. */
  private byte[] combine(byte[] key, byte[] older, byte[] newer) {
    ColumnLayout layout = layouts.byId(Bytes.getShort(key, 0));
    if (RowState.replacesOlder(layout, newer, 0, newer.length)) {
      // The delta sets every column: nothing of the older row survives.
      return newer;
    }
    RowState[] s = combineScratch.get();
    s[0].decode(layout, newer);
    s[1].decode(layout, older);
    s[0].mergeOlder(s[1], loader);
    return s[0].encode();
  }

  /** The memtables' fold: {@link #combine}, and whole-row deltas found without decoding. */
  private final class MemTableFold implements RowCombiner {
    @Override
    public byte[] combine(byte[] key, byte[] older, byte[] newer) {
      return Db.this.combine(key, older, newer);
    }

    @Override
    public boolean replacesOlder(byte[] key, int keyOff, byte[] row, int rowOff, int rowLen) {
      ColumnLayout layout = layouts.byId(Bytes.getShort(key, keyOff));
      return layout != null && RowState.replacesOlder(layout, row, rowOff, rowLen);
    }
  }

  // ---------------------------------------------------------------- validation

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("Db " + dir + " is closed");
    }
  }

  private void checkBucket(int bucket) {
    if (bucket < 0 || bucket >= config.totalBuckets()) {
      throw new IllegalArgumentException(
          "bucket "
              + bucket
              + " out of range: valid buckets are 0.."
              + (config.totalBuckets() - 1));
    }
    if (!ownsBucket(bucket)) {
      throw new IllegalArgumentException(
          "bucket "
              + bucket
              + " is not owned by this shard: owned ranges are "
              + OwnedRanges.format(ownedRanges));
    }
  }

  private boolean ownsBucket(int bucket) {
    int[] r = ownedRanges;
    for (int i = 0; i < r.length; i += 2) {
      if (bucket >= r[i] && bucket <= r[i + 1]) {
        return true;
      }
    }
    return false;
  }

  /** Inclusive [lo, hi] pairs of the buckets this shard owns (config, or as shrunk since). */
  public int[] ownedBucketRanges() {
    return ownedRanges.clone();
  }

  /**
   * Gives up every bucket outside {@code pairs} (inclusive [lo, hi] pairs, each inside an owned
   * range). Files stay as they are: reads of other buckets are rejected, and compaction drops their
   * rows. Durable on return.
   */
  public void shrinkBuckets(int[] pairs) {
    checkOpen();
    if (remote != null) {
      throw new UnsupportedOperationException(
          "shrinkBuckets is not supported yet for a Db whose primary volume is remote ("
              + remote.storage().uri()
              + "); shrink a local Db or one restored from a snapshot");
    }
    if (pairs.length == 0 || pairs.length % 2 != 0) {
      throw new IllegalArgumentException(
          "shrinkBuckets needs a non-empty list of [lo, hi] pairs, got " + pairs.length + " ints");
    }
    mutex.lock();
    try {
      for (int i = 0; i < pairs.length; i += 2) {
        boolean inside = false;
        for (int j = 0; j < ownedRanges.length; j += 2) {
          inside |= pairs[i] >= ownedRanges[j] && pairs[i + 1] <= ownedRanges[j + 1];
        }
        if (pairs[i] > pairs[i + 1] || !inside) {
          throw new IllegalArgumentException(
              "cannot shrink to buckets "
                  + pairs[i]
                  + "-"
                  + pairs[i + 1]
                  + ": each range must lie inside an owned range ("
                  + OwnedRanges.format(ownedRanges)
                  + ")");
        }
      }
      OwnedRanges.write(dir, pairs);
      ownedRanges = pairs.clone();
    } finally {
      mutex.unlock();
    }
  }

  // ---------------------------------------------------------------- expansion

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
    checkOpen();
    if (remote != null) {
      throw new UnsupportedOperationException(
          "expandBuckets is not supported yet for a Db whose primary volume is remote ("
              + remote.storage().uri()
              + "); expand a local Db or one restored from a snapshot");
    }
    grownRanges(pairs);
    Optional<ExternalFiles> existing = ExternalFiles.read(dir);
    if (existing.isPresent() && !existing.get().isOn(volume)) {
      throw new IllegalArgumentException(
          "the Db in "
              + dir
              + " reads files in place on "
              + existing.get().root()
              + "; it can adopt files only from that volume, not from "
              + volume.uri());
    }
    Storage reader =
        ownedVolume != null && ownedVolume.uri().equals(volume.uri()) ? ownedVolume : volume;
    flushInternal();
    Set<Integer> held = holdAllTrees();
    try {
      // Again while holding the trees, which also keeps out a concurrent expansion.
      int[] grown = grownRanges(pairs);
      purgeBuckets(pairs);
      adopt(pairs, grown, adopted, volume.uri(), reader, ExternalFiles.read(dir));
    } finally {
      releaseTrees(held);
    }
  }

  /** The owned ranges grown by {@code pairs}, sorted and coalesced; rejects invalid ones. */
  private int[] grownRanges(int[] pairs) {
    if (pairs.length == 0 || pairs.length % 2 != 0) {
      throw new IllegalArgumentException(
          "expandBuckets needs a non-empty list of [lo, hi] pairs, got " + pairs.length + " ints");
    }
    int[] owned = ownedRanges;
    List<int[]> all = new ArrayList<>();
    for (int i = 0; i < owned.length; i += 2) {
      all.add(new int[] {owned[i], owned[i + 1]});
    }
    for (int i = 0; i < pairs.length; i += 2) {
      int lo = pairs[i];
      int hi = pairs[i + 1];
      if (lo < 0 || hi < lo || hi >= config.totalBuckets()) {
        throw new IllegalArgumentException(
            "cannot expand by buckets "
                + lo
                + "-"
                + hi
                + ": valid buckets are 0.."
                + (config.totalBuckets() - 1));
      }
      for (int[] r : all) {
        if (lo <= r[1] && hi >= r[0]) {
          throw new IllegalArgumentException(
              "cannot expand by buckets "
                  + lo
                  + "-"
                  + hi
                  + ": they overlap buckets "
                  + r[0]
                  + "-"
                  + r[1]
                  + " this shard already owns or takes over (owned: "
                  + OwnedRanges.format(owned)
                  + "); expand only by buckets it does not own");
        }
      }
      all.add(new int[] {lo, hi});
    }
    all.sort((a, b) -> Integer.compare(a[0], b[0]));
    List<int[]> merged = new ArrayList<>();
    for (int[] r : all) {
      int[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
      if (last != null && last[1] + 1 == r[0]) {
        last[1] = r[1];
      } else {
        merged.add(r.clone());
      }
    }
    int[] out = new int[merged.size() * 2];
    for (int i = 0; i < merged.size(); i++) {
      out[2 * i] = merged.get(i)[0];
      out[2 * i + 1] = merged.get(i)[1];
    }
    return out;
  }

  /** Marks every tree as compacting, waiting for running compactions: levels stay as they are. */
  private Set<Integer> holdAllTrees() {
    Set<Integer> held = new HashSet<>();
    mutex.lock();
    try {
      runningCompactions++;
      for (int fam = 0; fam < layouts.familySlots(); fam++) {
        while (compacting.contains(fam)) {
          awaitChange();
        }
        compacting.add(fam);
        held.add(fam);
      }
    } catch (RuntimeException e) {
      compacting.removeAll(held);
      runningCompactions--;
      changed.signalAll();
      throw e;
    } finally {
      mutex.unlock();
    }
    return held;
  }

  private void releaseTrees(Set<Integer> held) {
    mutex.lock();
    try {
      compacting.removeAll(held);
      runningCompactions--;
      changed.signalAll();
      maybeScheduleCompactions();
    } finally {
      mutex.unlock();
    }
  }

  /**
   * Rewrites, in place, every file holding rows of the (unowned) buckets {@code pairs}, dropping
   * all unowned rows. Memtables hold none: the caller flushed, and unowned buckets take no writes.
   */
  private void purgeBuckets(int[] pairs) {
    Version v = versions.acquire();
    try {
      for (int fam = 0; fam < v.trees().size(); fam++) {
        ColumnLayout layout = layouts.byId(fam);
        if (layout == null) {
          continue;
        }
        VersionEdit edit = new VersionEdit();
        boolean changedTree = false;
        Tree tree = v.tree(fam);
        for (int level = 0; level < tree.levelCount(); level++) {
          for (FileMeta f : tree.level(level)) {
            if (holdsBuckets(f, pairs)) {
              rewriteOwnedRows(f, level, layout, edit);
              changedTree = true;
            }
          }
        }
        if (changedTree) {
          mutex.lock();
          try {
            versions.apply(edit);
            compactions.incrementAndGet();
            changed.signalAll();
          } finally {
            mutex.unlock();
          }
        }
      }
    } finally {
      v.unref();
    }
  }

  private static boolean holdsBuckets(FileMeta f, int[] pairs) {
    int first = Bytes.getShort(f.smallest(), 0);
    int last = Bytes.getShort(f.largest(), 0);
    for (int i = 0; i < pairs.length; i += 2) {
      if (pairs[i] > last || pairs[i + 1] < first) {
        continue;
      }
      try (KvIterator it = f.table().iterator(1)) {
        it.seek(new byte[] {(byte) (pairs[i] >>> 8), (byte) pairs[i]});
        if (it.valid() && Bytes.getShort(it.key(), 0) <= pairs[i + 1]) {
          return true;
        }
      }
    }
    return false;
  }

  private void rewriteOwnedRows(FileMeta f, int level, ColumnLayout layout, VersionEdit edit) {
    edit.replace(f, rewriteKeeping(f, level, layout, this::ownsBucket, edit));
  }

  /** Rewrites {@code f} for {@code level} with only the rows of buckets {@code keep} accepts. */
  private List<FileMeta> rewriteKeeping(
      FileMeta f, int level, ColumnLayout layout, IntPredicate keep, VersionEdit edit) {
    int fam = layout.familyId();
    Compaction c =
        new Compaction(Compaction.Kind.MERGE, fam, level, level, List.of(f), List.of(), false, 0);
    int readAhead = config.readAheadEnabled() ? config.readAheadSize() : 1;
    try (OutputWriter w =
        outputWriter(fam, level, level == 0 ? Long.MAX_VALUE : config.targetFileSize())) {
      new CompactionJob(c, layout, loader, readAhead, n -> false, keep).run(w);
      List<FileMeta> out = w.finish();
      for (ValueLogFile log : w.vlogs()) {
        edit.addVlog(log);
      }
      compactionIn.addAndGet(f.size());
      compactionOut.addAndGet(w.bytesWritten());
      return out;
    }
  }

  /** Installs the adopted files and the grown ranges; the trees are held. */
  private void adopt(
      int[] pairs,
      int[] grown,
      AdoptedFiles adopted,
      java.net.URI root,
      Storage reader,
      Optional<ExternalFiles> existing) {
    Version cur = versions.current();
    Map<Long, String> added = new java.util.LinkedHashMap<>();
    List<ValueLogFile> logs = new ArrayList<>();
    for (AdoptedFiles.LogFile l : adopted.logs()) {
      ValueLogFile have = cur.vlogFiles().get(l.file().number());
      if (have == null) {
        added.put(l.file().number(), l.volumePath());
        logs.add(l.file());
      } else if (have.size() != l.file().size()) {
        throw new IllegalArgumentException(
            "value-log number "
                + l.file().number()
                + " names different files in "
                + dir
                + " and in the sources ("
                + l.volumePath()
                + "); these shards cannot be combined");
      }
    }
    List<AdoptedFiles.TableFile> tables = adopted.tables();
    List<Integer> l0Order = new ArrayList<>();
    int[] levels = placeAdopted(cur, tables, l0Order);
    long[] numbers = new long[tables.size()];
    for (int i = 0; i < tables.size(); i++) {
      numbers[i] = versions.newFileNumber();
      added.put(numbers[i], tables.get(i).volumePath());
    }
    // Registered before the tables open; on disk (EXTERNAL) only once the intent is.
    versions.adoptExternal(new ExternalFiles(root, added).locate(reader, dir));
    VersionEdit edit = new VersionEdit();
    List<FileMeta> opened = new ArrayList<>();
    List<Long> tableNumbers = new ArrayList<>();
    List<List<FileMeta>> placed = new ArrayList<>();
    PendingExpansion intent = null;
    boolean applying = false;
    try {
      for (int i = 0; i < tables.size(); i++) {
        AdoptedFiles.TableFile t = tables.get(i);
        Table table = openTable(numbers[i], levels[i], t.size());
        FileMeta meta = new FileMeta(numbers[i], t.family(), t.size(), t.properties(), table);
        opened.add(meta);
        if (reachesOwned(meta)) {
          // Rows the source holds of buckets this shard owns (given up by the source, not yet
          // compacted away) must not mix with this shard's: such a table is copied without them.
          List<FileMeta> copy =
              rewriteKeeping(meta, levels[i], layouts.byId(t.family()), inRanges(pairs), edit);
          opened.remove(meta);
          table.close();
          opened.addAll(copy);
          placed.add(copy);
          added.remove(numbers[i]);
        } else {
          placed.add(List.of(meta));
        }
        placed.get(i).forEach(f -> tableNumbers.add(f.number()));
      }
      intent =
          new PendingExpansion(
              grown, tableNumbers, new ArrayList<>(added.keySet()), existing.isPresent());
      intent.write(dir);
      Map<Long, String> all =
          new java.util.LinkedHashMap<>(
              existing.map(ExternalFiles::files).orElse(Collections.emptyMap()));
      all.putAll(added);
      new ExternalFiles(root, all).write(dir);
      // Each added L0 file goes in front of L0, so the oldest goes first.
      for (int i = l0Order.size() - 1; i >= 0; i--) {
        List<FileMeta> files = placed.get(l0Order.get(i));
        for (int j = files.size() - 1; j >= 0; j--) {
          edit.add(0, files.get(j));
        }
      }
      for (int i = 0; i < tables.size(); i++) {
        if (levels[i] > 0) {
          for (FileMeta f : placed.get(i)) {
            edit.add(levels[i], f);
          }
        }
      }
      logs.forEach(edit::addVlog);
      mutex.lock();
      try {
        applying = true;
        versions.apply(edit);
        OwnedRanges.write(dir, grown);
        ownedRanges = grown;
        changed.signalAll();
      } finally {
        mutex.unlock();
      }
    } catch (RuntimeException e) {
      if (!applying) {
        for (FileMeta f : opened) {
          f.table().close();
          if (!versions.isExternal(f.number())) {
            deleteQuietly(versions.tablePath(f.number()));
          }
        }
        if (intent != null) {
          intent.rollBack(dir);
          PendingExpansion.finish(dir);
        }
      }
      // Otherwise the manifest may or may not hold the files: the next open settles it.
      throw e;
    }
    PendingExpansion.finish(dir);
  }

  private boolean reachesOwned(FileMeta f) {
    int first = Bytes.getShort(f.smallest(), 0);
    int last = Bytes.getShort(f.largest(), 0);
    int[] owned = ownedRanges;
    for (int i = 0; i < owned.length; i += 2) {
      if (owned[i] <= last && owned[i + 1] >= first) {
        return true;
      }
    }
    return false;
  }

  private static IntPredicate inRanges(int[] pairs) {
    return b -> {
      for (int i = 0; i < pairs.length; i += 2) {
        if (b >= pairs[i] && b <= pairs[i + 1]) {
          return true;
        }
      }
      return false;
    };
  }

  /**
   * The level of each adopted table. A source's L0 tables go to L0; each deeper source level, in
   * order, to the shallowest level below the one before it where its tables overlap no file. A
   * source that does not fit goes to L0 whole. {@code l0Order} receives the L0 ones newest first.
   */
  private int[] placeAdopted(
      Version v, List<AdoptedFiles.TableFile> tables, List<Integer> l0Order) {
    int maxLevels = config.maxLevels();
    Map<Integer, List<List<byte[][]>>> takenByFamily = new HashMap<>();
    Map<Long, List<Integer>> groups = new java.util.TreeMap<>();
    for (int i = 0; i < tables.size(); i++) {
      AdoptedFiles.TableFile t = tables.get(i);
      groups.computeIfAbsent(((long) t.family() << 32) | t.source(), k -> new ArrayList<>()).add(i);
    }
    int[] out = new int[tables.size()];
    for (List<Integer> group : groups.values()) {
      int fam = tables.get(group.get(0)).family();
      List<List<byte[][]>> taken =
          takenByFamily.computeIfAbsent(fam, f -> takenSpans(v, f, maxLevels));
      java.util.TreeMap<Integer, List<Integer>> bySourceLevel = new java.util.TreeMap<>();
      for (int i : group) {
        bySourceLevel.computeIfAbsent(tables.get(i).level(), k -> new ArrayList<>()).add(i);
      }
      Map<Integer, Integer> mapping = new HashMap<>();
      int previous = 0;
      boolean fits = true;
      for (Map.Entry<Integer, List<Integer>> e : bySourceLevel.entrySet()) {
        if (e.getKey() == 0) {
          mapping.put(0, 0);
          continue;
        }
        int level = previous + 1;
        while (level < maxLevels && overlapsAny(taken.get(level), tables, e.getValue())) {
          level++;
        }
        if (level >= maxLevels) {
          fits = false;
          break;
        }
        mapping.put(e.getKey(), level);
        previous = level;
      }
      for (Map.Entry<Integer, List<Integer>> e : bySourceLevel.entrySet()) {
        for (int i : e.getValue()) {
          out[i] = fits ? mapping.get(e.getKey()) : 0;
          if (out[i] == 0) {
            l0Order.add(i);
          } else {
            AdoptedFiles.TableFile t = tables.get(i);
            taken
                .get(out[i])
                .add(new byte[][] {t.properties().smallest(), t.properties().largest()});
          }
        }
      }
    }
    return out;
  }

  /** Key spans of the files of family {@code fam} per level. */
  private static List<List<byte[][]>> takenSpans(Version v, int fam, int maxLevels) {
    List<List<byte[][]>> out = new ArrayList<>();
    for (int level = 0; level < maxLevels; level++) {
      List<byte[][]> spans = new ArrayList<>();
      if (fam < v.trees().size() && level < v.tree(fam).levelCount()) {
        for (FileMeta f : v.tree(fam).level(level)) {
          spans.add(new byte[][] {f.smallest(), f.largest()});
        }
      }
      out.add(spans);
    }
    return out;
  }

  private static boolean overlapsAny(
      List<byte[][]> taken, List<AdoptedFiles.TableFile> tables, List<Integer> group) {
    for (int i : group) {
      byte[] lo = tables.get(i).properties().smallest();
      byte[] hi = tables.get(i).properties().largest();
      for (byte[][] s : taken) {
        if (Bytes.compare(s[1], lo) >= 0 && Bytes.compare(s[0], hi) <= 0) {
          return true;
        }
      }
    }
    return false;
  }

  private static void checkKey(byte[] key) {
    if (key == null) {
      throw new IllegalArgumentException("key must not be null");
    }
  }

  private static int[] checkProjection(ColumnLayout layout, Object options, int[] projection) {
    if (options == null) {
      throw new IllegalArgumentException("read/scan options must not be null (use DEFAULT)");
    }
    if (projection != null) {
      for (int c : projection) {
        layout.checkColumn(c);
      }
    }
    return projection;
  }

  // ---------------------------------------------------------------- writes

  public void put(int bucket, String family, byte[] key, int column, byte[] value) {
    put(bucket, family, key, column, value, WriteBatch.DEFAULT_TTL);
  }

  public void put(int bucket, String family, byte[] key, int column, byte[] value, long ttlMillis) {
    writeOne(WriteBatch.Kind.PUT, bucket, family, key, column, value, ttlMillis);
  }

  public void merge(int bucket, String family, byte[] key, int column, byte[] operand) {
    merge(bucket, family, key, column, operand, WriteBatch.DEFAULT_TTL);
  }

  public void merge(
      int bucket, String family, byte[] key, int column, byte[] operand, long ttlMillis) {
    writeOne(WriteBatch.Kind.MERGE, bucket, family, key, column, operand, ttlMillis);
  }

  public void delete(int bucket, String family, byte[] key, int column) {
    writeOne(WriteBatch.Kind.DELETE, bucket, family, key, column, null, 0);
  }

  public void deleteRow(int bucket, String family, byte[] key) {
    writeOne(WriteBatch.Kind.DELETE_ROW, bucket, family, key, 0, null, 0);
  }

  public void write(WriteBatch batch) {
    checkOpen();
    Layouts l = layouts;
    for (WriteBatch.Op op : batch.ops) {
      validate(l, op.kind, op.bucket, op.family, op.key, op.column, op.value, op.ttl);
    }
    mutex.lock();
    try {
      makeRoomForWrite();
      // Operations on the same row are folded into one delta so readers never see half of them.
      Map<java.nio.ByteBuffer, byte[]> rows = new java.util.LinkedHashMap<>();
      Scratch s = scratch.get();
      for (WriteBatch.Op op : batch.ops) {
        encodeDelta(layouts, op.kind, op.bucket, op.family, op.key, op.column, op.value, op.ttl);
        byte[] key = s.key.toByteArray();
        byte[] delta = s.row.toByteArray();
        rows.merge(
            java.nio.ByteBuffer.wrap(key), delta, (older, newer) -> combine(key, older, newer));
      }
      MemTable mem = versions.current().active();
      for (Map.Entry<java.nio.ByteBuffer, byte[]> e : rows.entrySet()) {
        byte[] key = e.getKey().array();
        mem.put(key, key.length, e.getValue(), e.getValue().length);
      }
    } finally {
      mutex.unlock();
    }
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
    checkOpen();
    checkBucket(bucket);
    checkKey(key);
    ColumnLayout layout = layouts.require(family);
    checkRowShape(layout, family, key, keyLen, values, columnEnds);
    mutex.lock();
    try {
      makeRoomForWrite();
      Scratch s = scratch.get();
      s.key(layout, bucket, key, keyLen);
      ByteWriter w = s.row;
      w.reset();
      w.writeVarInt(layout.size());
      long expiry =
          config.defaultTtlMillis() == 0 ? 0 : clock.nowMillis() + config.defaultTtlMillis();
      int start = 0;
      for (int i = 0; i < layout.size(); i++) {
        int end = columnEnds[i];
        w.writeVarInt(layout.id(i));
        w.writeByte(RowState.PUT);
        MergeOperator op = layout.operator(i);
        if (op != null && op.elementTtl()) {
          w.writeVarLong(0);
          w.writeLengthPrefixed(op.toStored(Arrays.copyOfRange(values, start, end), expiry));
        } else {
          w.writeVarLong(expiry);
          w.writeVarInt(end - start);
          w.writeBytes(values, start, end - start);
        }
        start = end;
      }
      versions.current().active().put(s.key.array(), s.key.size(), w.array(), w.size(), true);
    } finally {
      mutex.unlock();
    }
  }

  private static void checkRowShape(
      ColumnLayout layout, String family, byte[] key, int keyLen, byte[] values, int[] columnEnds) {
    if (keyLen < 0 || keyLen > key.length) {
      throw new IllegalArgumentException(
          "key length " + keyLen + " outside the key array of " + key.length + " bytes");
    }
    if (values == null || columnEnds == null || columnEnds.length != layout.size()) {
      throw new IllegalArgumentException(
          "putRow needs one column end per column of '"
              + family
              + "' ("
              + layout.size()
              + "), got "
              + (columnEnds == null ? "none" : String.valueOf(columnEnds.length)));
    }
    int start = 0;
    for (int i = 0; i < columnEnds.length; i++) {
      if (columnEnds[i] < start || columnEnds[i] > values.length) {
        throw new IllegalArgumentException(
            "column "
                + i
                + " of '"
                + family
                + "' ends at "
                + columnEnds[i]
                + ", outside "
                + start
                + ".."
                + values.length
                + " of the values array");
      }
      start = columnEnds[i];
    }
  }

  private void writeOne(
      WriteBatch.Kind kind,
      int bucket,
      String family,
      byte[] key,
      int column,
      byte[] value,
      long ttl) {
    checkOpen();
    validate(layouts, kind, bucket, family, key, column, value, ttl);
    mutex.lock();
    try {
      makeRoomForWrite();
      encodeDelta(layouts, kind, bucket, family, key, column, value, ttl);
      Scratch s = scratch.get();
      versions.current().active().put(s.key.array(), s.key.size(), s.row.array(), s.row.size());
    } finally {
      mutex.unlock();
    }
  }

  private void validate(
      Layouts l,
      WriteBatch.Kind kind,
      int bucket,
      String family,
      byte[] key,
      int column,
      byte[] value,
      long ttl) {
    checkBucket(bucket);
    checkKey(key);
    ColumnLayout layout = l.require(family);
    if (kind == WriteBatch.Kind.DELETE_ROW) {
      return;
    }
    layout.checkColumn(column);
    if (kind == WriteBatch.Kind.DELETE) {
      return;
    }
    if (value == null) {
      throw new IllegalArgumentException(
          "value must not be null (use delete) for column " + column + " of '" + family + "'");
    }
    if (ttl < WriteBatch.DEFAULT_TTL) {
      throw new IllegalArgumentException(
          "invalid ttl " + ttl + " ms: use a positive ttl, 0 for none or -1 for ttl.default");
    }
    MergeOperator op = layout.operator(column);
    if (kind == WriteBatch.Kind.MERGE) {
      if (op == null) {
        throw new IllegalArgumentException(
            "column "
                + column
                + " of family '"
                + family
                + "' has no merge operator; declare one with ColumnSpec.merging(name, operator)");
      }
      op.validateOperand(value);
    }
  }

  /**
   * Encodes the memtable key and a one-column (or all-column delete) delta into the thread's
   * scratch buffers. Under the mutex.
   */
  private void encodeDelta(
      Layouts l,
      WriteBatch.Kind kind,
      int bucket,
      String family,
      byte[] key,
      int column,
      byte[] value,
      long ttl) {
    ColumnLayout layout = l.require(family);
    Scratch s = scratch.get();
    s.key(layout, bucket, key);
    ByteWriter w = s.row;
    w.reset();
    MemTable mem = versions.current().active();
    if (kind == WriteBatch.Kind.DELETE_ROW) {
      w.writeVarInt(layout.size());
      for (int i = 0; i < layout.size(); i++) {
        w.writeVarInt(layout.id(i));
        w.writeByte(RowState.DELETE);
      }
    } else {
      w.writeVarInt(1);
      w.writeVarInt(layout.id(column));
      if (kind == WriteBatch.Kind.DELETE) {
        w.writeByte(RowState.DELETE);
      } else {
        long now = clock.nowMillis();
        long effectiveTtl = ttl == WriteBatch.DEFAULT_TTL ? config.defaultTtlMillis() : ttl;
        long expiry = effectiveTtl == 0 ? 0 : now + effectiveTtl;
        MergeOperator op = layout.operator(column);
        byte[] stored = value;
        if (op != null && op.elementTtl()) {
          stored = op.toStored(value, expiry);
          expiry = 0;
        }
        if (kind == WriteBatch.Kind.PUT) {
          w.writeByte(RowState.PUT);
          w.writeVarLong(expiry);
        } else {
          w.writeByte(RowState.MERGE);
          w.writeVarLong(expiry);
          w.writeVarLong(now);
          mem.noteMerge(now);
        }
        w.writeLengthPrefixed(stored);
      }
    }
  }

  /** Blocks while memtables are full or L0 is over the stall limit; rotates the memtable. */
  private void makeRoomForWrite() {
    long stallStart = 0;
    try {
      while (true) {
        checkOpen();
        Throwable bg = backgroundError;
        if (bg != null) {
          throw new CobbleException(
              "background work failed; writes are disabled: " + bg.getMessage(), bg);
        }
        Version v = versions.current();
        boolean stall = v.immutables().size() + v.maxL0Files() > config.writeStallLimit();
        if (!stall) {
          if (v.active().approximateBytes() < config.memtableCapacity()) {
            return;
          }
          if (v.immutables().size() < config.memtableBufferCount() - 1) {
            rotateMemTable();
            return;
          }
        }
        if (flushFailure != null && !flushScheduled && !v.immutables().isEmpty()) {
          // The memtables are full because their flush failed: retry it, and fail this write
          // rather than wait for a volume that may stay away.
          scheduleFlush();
          throw new CobbleException(
              "cannot write: memtables are full and their flush to "
                  + remote.storage().uri()
                  + " failed ("
                  + flushFailure.getMessage()
                  + "); a retry is running",
              flushFailure);
        }
        if (stallStart == 0) {
          stallStart = System.nanoTime();
          stallWaits.incrementAndGet();
        }
        try {
          changed.await(50, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new CobbleException("interrupted while waiting for a flush or compaction", e);
        }
      }
    } finally {
      if (stallStart != 0) {
        stallNanos.addAndGet(System.nanoTime() - stallStart);
      }
    }
  }

  /** Seals the active memtable and schedules its flush. Under the mutex. */
  private void rotateMemTable() {
    Version v = versions.current();
    MemTable old = v.active();
    old.seal();
    if (old instanceof AdaptiveMemTable) {
      nextAdaptiveType = ((AdaptiveMemTable) old).nextType();
    }
    List<MemTable> imms = new ArrayList<>();
    imms.add(old);
    imms.addAll(v.immutables());
    versions.apply(new VersionEdit().memtables(newMemTable(), imms));
    scheduleFlush();
  }

  private void scheduleFlush() {
    if (!flushScheduled) {
      flushScheduled = true;
      flushExecutor.execute(this::flushLoop);
    }
  }

  // ---------------------------------------------------------------- flush

  private void flushLoop() {
    while (true) {
      MemTable imm;
      mutex.lock();
      try {
        List<MemTable> imms = versions.current().immutables();
        if (imms.isEmpty() || backgroundError != null) {
          flushScheduled = false;
          if (backgroundError != null) {
            failSealWaiters(backgroundError);
          }
          changed.signalAll();
          return;
        }
        imm = imms.get(imms.size() - 1);
      } finally {
        mutex.unlock();
      }
      try {
        flushMemTable(imm);
      } catch (Throwable t) {
        mutex.lock();
        try {
          if (retryable(t)) {
            flushFailure = t;
            flushFailures++;
          } else {
            backgroundError = t;
          }
          flushScheduled = false;
          failSealWaiters(t);
          changed.signalAll();
        } finally {
          mutex.unlock();
        }
        return;
      }
    }
  }

  /**
   * Whether a failed flush may be retried: one to a remote primary whose volume failed (nothing was
   * installed, the memtable is still there), but not one of a writer another writer fenced off.
   */
  private boolean retryable(Throwable t) {
    if (remote == null || !(t instanceof RuntimeException)) {
      return false;
    }
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof WriterFencedException) {
        return false;
      }
    }
    return true;
  }

  /** Throws the flush failure recorded after {@code seen} failures. Under the mutex. */
  private void checkFlushFailure(long seen) {
    if (flushFailures != seen) {
      throw new CobbleException(
          "flush to "
              + remote.storage().uri()
              + " failed: "
              + flushFailure.getMessage()
              + "; the data stays in memory and the next flush retries it",
          flushFailure);
    }
  }

  private TableOptions tableOptions(int level) {
    return TableOptions.builder()
        .blockSize(config.blockSize())
        .restartInterval(config.blockRestartInterval())
        .bloomBitsPerKey(config.bloomFilterEnabled() ? config.bloomBitsPerKey() : 0)
        .partitionedIndex(config.partitionedIndex())
        .lz4(config.lz4ForLevel(level))
        .sync(config.fsyncEnabled())
        .build();
  }

  private OutputWriter outputWriter(int family, int level, long targetSize) {
    return new OutputWriter(
        versions,
        family,
        layouts.schema().id(),
        tableOptions(level),
        targetSize,
        config.valueSeparationThreshold(),
        n -> {
          upload(n, false);
          return openTable(n, level, -1);
        });
  }

  /**
   * With a remote primary, uploads a finished output before any version edit names it; a failure
   * fails the flush or compaction, which then installs nothing.
   */
  private void upload(long number, boolean vlog) {
    if (remote != null) {
      remote.upload(number, vlog, vlog ? versions.vlogPath(number) : versions.tablePath(number));
    }
  }

  /** Writes one L0 table per family present in the memtable, then installs them. */
  private void flushMemTable(MemTable imm) {
    Layouts l = layouts;
    List<FileMeta> outputs = new ArrayList<>();
    List<OutputWriter> writers = new ArrayList<>();
    long bytes = 0;
    try {
      KvIterator it = imm.iterator();
      RowState row = new RowState();
      ByteReader reader = new ByteReader();
      OutputWriter out = null;
      int family = -1;
      for (it.seekToFirst(); it.valid(); it.next()) {
        byte[] key = it.key();
        int fam = Bytes.getShort(key, 0);
        if (fam != family) {
          family = fam;
          out = outputWriter(fam, 0, Long.MAX_VALUE);
          writers.add(out);
        }
        byte[] value = it.value();
        row.decode(l.byId(fam), value, 0, value.length, reader);
        if (row.isEmpty()) {
          continue;
        }
        out.add(Arrays.copyOfRange(key, 2, key.length), row);
      }
      VersionEdit edit = new VersionEdit();
      for (OutputWriter w : writers) {
        for (FileMeta f : w.finish()) {
          outputs.add(f);
          edit.add(0, f);
        }
        for (ValueLogFile f : w.vlogs()) {
          upload(f.number(), true);
          edit.addVlog(f);
        }
        bytes += w.bytesWritten();
      }
      mutex.lock();
      try {
        List<MemTable> imms = new ArrayList<>(versions.current().immutables());
        imms.remove(imm);
        edit.memtables(null, imms);
        versions.apply(edit);
        flushFailure = null;
        completeSealWaiters(imm);
        flushes.incrementAndGet();
        flushBytes.addAndGet(bytes);
        changed.signalAll();
        maybeScheduleCompactions();
      } finally {
        mutex.unlock();
      }
    } catch (RuntimeException e) {
      for (OutputWriter w : writers) {
        w.close();
      }
      Map<Long, Boolean> discarded = new java.util.HashMap<>();
      for (FileMeta f : outputs) {
        f.table().close();
        deleteQuietly(versions.tablePath(f.number()));
        discarded.put(f.number(), false);
      }
      for (OutputWriter w : writers) {
        for (ValueLogFile f : w.vlogs()) {
          deleteQuietly(versions.vlogPath(f.number()));
          discarded.put(f.number(), true);
        }
      }
      if (remote != null) {
        remote.discard(discarded);
      }
      throw e;
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException ignored) {
      // Swept as an orphan on the next open.
    }
  }

  // ---------------------------------------------------------------- compaction

  /** Starts due compactions for idle trees. Under the mutex. */
  private void maybeScheduleCompactions() {
    if (closed || backgroundError != null || compactionExecutor == null) {
      return;
    }
    Version v = versions.current();
    for (int fam = 0; fam < v.trees().size(); fam++) {
      if (compacting.contains(fam) || layouts.byId(fam) == null) {
        continue;
      }
      Compaction c = picker.pick(v, fam, clock.nowMillis());
      if (c == null) {
        continue;
      }
      compacting.add(fam);
      runningCompactions++;
      compactionExecutor.execute(() -> runBackgroundCompaction(c));
    }
  }

  private void runBackgroundCompaction(Compaction c) {
    try {
      runCompaction(c);
    } catch (CompactionAbandoned abandoned) {
      // The Db is closing; the tree stays as it was and the next open compacts it again.
    } catch (Throwable t) {
      mutex.lock();
      try {
        backgroundError = t;
      } finally {
        mutex.unlock();
      }
    } finally {
      mutex.lock();
      try {
        compacting.remove(c.family());
        runningCompactions--;
        changed.signalAll();
        maybeScheduleCompactions();
      } finally {
        mutex.unlock();
      }
    }
  }

  /** Executes a compaction whose tree is marked as compacting, and installs the result. */
  private void runCompaction(Compaction c) {
    VersionEdit edit = new VersionEdit();
    for (FileMeta f : c.allInputs()) {
      edit.remove(f);
    }
    long out = 0;
    if (c.kind() == Compaction.Kind.TRIVIAL_MOVE) {
      edit.add(c.outputLevel(), c.inputs().get(0));
    } else if (c.kind() == Compaction.Kind.MERGE) {
      ColumnLayout layout = layouts.byId(c.family());
      int readAhead = config.readAheadEnabled() ? config.readAheadSize() : 1;
      try (OutputWriter w = outputWriter(c.family(), c.outputLevel(), config.targetFileSize())) {
        Version v = versions.current();
        try {
          new CompactionJob(
                  c,
                  layout,
                  loader,
                  readAhead,
                  n -> v.vlogLiveRatio(n) < VLOG_REWRITE_RATIO,
                  this::ownsBucket)
              .abandonWhen(() -> closed)
              .run(w);
        } catch (CompactionAbandoned e) {
          for (FileMeta f : w.abandon()) {
            f.table().close();
            deleteQuietly(versions.tablePath(f.number()));
          }
          throw e;
        }
        for (FileMeta f : w.finish()) {
          edit.add(c.outputLevel(), f);
        }
        for (ValueLogFile f : w.vlogs()) {
          upload(f.number(), true);
          edit.addVlog(f);
        }
        out = w.bytesWritten();
      }
    }
    mutex.lock();
    try {
      versions.apply(edit);
      switch (c.kind()) {
        case TRIVIAL_MOVE:
          trivialMoves.incrementAndGet();
          break;
        case DROP_EXPIRED:
          expiredDrops.incrementAndGet();
          break;
        default:
          compactions.incrementAndGet();
          compactionIn.addAndGet(c.inputBytes());
          compactionOut.addAndGet(out);
          break;
      }
      changed.signalAll();
    } finally {
      mutex.unlock();
    }
  }

  /** Flushes, then compacts every tree until each lives in a single level. */
  public void compactAll() {
    flush();
    for (int fam = 0; fam < layouts.familySlots(); fam++) {
      while (true) {
        Compaction c;
        mutex.lock();
        try {
          while (compacting.contains(fam)) {
            awaitChange();
          }
          c = picker.pickManual(versions.current(), fam, clock.nowMillis());
          if (c == null) {
            break;
          }
          compacting.add(fam);
          runningCompactions++;
        } finally {
          mutex.unlock();
        }
        try {
          runCompaction(c);
        } finally {
          mutex.lock();
          try {
            compacting.remove(fam);
            runningCompactions--;
            changed.signalAll();
          } finally {
            mutex.unlock();
          }
        }
      }
    }
    mutex.lock();
    try {
      maybeScheduleCompactions();
    } finally {
      mutex.unlock();
    }
    versions.awaitDeletions();
  }

  /** Waits until no compaction is running or due (tests and benchmarks use this). */
  public void waitForCompactions() {
    mutex.lock();
    try {
      while (true) {
        if (backgroundError != null) {
          throw new CobbleException(
              "background work failed: " + backgroundError.getMessage(), backgroundError);
        }
        maybeScheduleCompactions();
        if (runningCompactions == 0) {
          break;
        }
        awaitChange();
      }
    } finally {
      mutex.unlock();
    }
    versions.awaitDeletions();
  }

  private void awaitChange() {
    try {
      changed.await(50, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CobbleException("interrupted", e);
    }
  }

  /** Seals the active memtable (if not empty) and waits until every memtable is flushed. */
  public void flush() {
    checkOpen();
    flushInternal();
  }

  private void flushInternal() {
    mutex.lock();
    try {
      long failures = flushFailures;
      if (versions.current().active().entryCount() > 0) {
        while (versions.current().immutables().size() >= config.memtableBufferCount() - 1) {
          checkBackground();
          checkFlushFailure(failures);
          scheduleFlush();
          awaitChange();
        }
        rotateMemTable();
      }
      while (!versions.current().immutables().isEmpty()) {
        checkBackground();
        checkFlushFailure(failures);
        scheduleFlush();
        awaitChange();
      }
    } finally {
      mutex.unlock();
    }
  }

  private void checkBackground() {
    if (backgroundError != null) {
      throw new CobbleException(
          "background work failed: " + backgroundError.getMessage(), backgroundError);
    }
  }

  // ---------------------------------------------------------------- schema

  public Schema schema() {
    return layouts.schema();
  }

  public void createFamily(String name, List<ColumnSpec> columns) {
    changeSchema(layouts.schema().addFamily(name, columns));
  }

  public void addColumn(String family, ColumnSpec column) {
    changeSchema(layouts.schema().addColumn(family, column));
  }

  public void dropColumn(String family, String column) {
    changeSchema(layouts.schema().dropColumn(family, column));
  }

  private void changeSchema(Schema next) {
    checkOpen();
    Layouts resolved = new Layouts(next, config.mergeOperatorResolver());
    mutex.lock();
    try {
      Schema current = layouts.schema();
      if (next.id() != current.id() + 1) {
        throw new IllegalStateException("concurrent schema change; retry");
      }
      versions.apply(new VersionEdit().schema(next));
      layouts = resolved;
    } finally {
      mutex.unlock();
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
   * The cursor sees a consistent set of files; close it to release them.
   */
  public ScanCursor scan(int bucket, String family, byte[] start, byte[] end, ScanOptions options) {
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
      return new ScanCursor(this, v, layout, bucket, start, end, projection, options);
    } catch (RuntimeException e) {
      v.unref();
      throw e;
    }
  }

  ValueLoader loader() {
    return loader;
  }

  /**
   * Seals everything written before this call without waiting for the flush: the future completes
   * with a pinned version (the caller must {@link Version#unref()} it) whose files hold exactly
   * those writes, once they are flushed. Later writes go to newer memtables, which are flushed
   * after the sealed ones, so they are not in that version's files. What a snapshot captures.
   */
  public CompletableFuture<Version> sealForSnapshot() {
    checkOpen();
    mutex.lock();
    try {
      checkBackground();
      if (versions.current().active().entryCount() > 0) {
        // May exceed memtable.buffer-count by one; writers stall until the flush catches up.
        rotateMemTable();
      }
      List<MemTable> imms = versions.current().immutables();
      if (imms.isEmpty()) {
        return CompletableFuture.completedFuture(versions.acquire());
      }
      CompletableFuture<Version> sealed = new CompletableFuture<>();
      sealWaiters.computeIfAbsent(imms.get(0), k -> new ArrayList<>()).add(sealed);
      scheduleFlush();
      return sealed;
    } finally {
      mutex.unlock();
    }
  }

  /**
   * Hands the version that installed {@code flushed} to the snapshots sealed on it. Under mutex.
   */
  private void completeSealWaiters(MemTable flushed) {
    List<CompletableFuture<Version>> waiting = sealWaiters.remove(flushed);
    if (waiting == null) {
      return;
    }
    for (CompletableFuture<Version> sealed : waiting) {
      Version pinned = versions.acquire();
      if (!sealed.complete(pinned)) {
        pinned.unref();
      }
    }
  }

  /** Fails every snapshot waiting for a flush. Under the mutex. */
  private void failSealWaiters(Throwable cause) {
    for (List<CompletableFuture<Version>> waiting : sealWaiters.values()) {
      for (CompletableFuture<Version> sealed : waiting) {
        sealed.completeExceptionally(
            new CobbleException("the flush a snapshot of " + dir + " waited for failed", cause));
      }
    }
    sealWaiters.clear();
  }

  /** The version set, for snapshot and rescale code that resolves and adopts files. */
  public VersionSet versionSet() {
    return versions;
  }

  long now() {
    return clock.nowMillis();
  }

  // ---------------------------------------------------------------- metrics and close

  public DbMetrics metrics() {
    Version v = versions.acquire();
    try {
      int files = 0;
      long bytes = 0;
      int[] perLevel = new int[config.maxLevels()];
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
          flushes.get(),
          flushBytes.get(),
          compactions.get(),
          trivialMoves.get(),
          expiredDrops.get(),
          compactionIn.get(),
          compactionOut.get(),
          stallWaits.get(),
          stallNanos.get() / 1_000_000,
          cache.hits(),
          cache.misses(),
          cache.usage(),
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
    return dir;
  }

  /** The local cache of a remote primary's files; null when the working files are local. */
  public DiskCache remoteCache() {
    return remote == null ? null : remote.storage().cache();
  }

  public Config config() {
    return config;
  }

  /** Flushes memtables, waits for running compactions and releases the directory. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    Throwable failure = null;
    try {
      if (backgroundError == null) {
        flushInternal();
      }
    } catch (RuntimeException e) {
      failure = e;
    }
    mutex.lock();
    try {
      closed = true;
      failSealWaiters(new IllegalStateException("Db " + dir + " is closed"));
      while (runningCompactions > 0) {
        changed.awaitUninterruptibly();
      }
    } finally {
      mutex.unlock();
    }
    flushExecutor.shutdownNow();
    compactionExecutor.shutdownNow();
    versions.close();
    if (ownedVolume != null) {
      closeQuietly(ownedVolume);
    }
    try {
      fileLock.release();
    } catch (IOException ignored) {
      // The channel close below releases it as well.
    }
    closeQuietly(lockChannel);
    if (failure != null) {
      throw new CobbleException("Db " + dir + " closed but its final flush failed", failure);
    }
  }
}
