package io.cobble;

import io.cobble.cache.BlockCache;
import io.cobble.compaction.CompactionFilter;
import io.cobble.compaction.OutputWriter;
import io.cobble.memtable.AdaptiveMemTable;
import io.cobble.memtable.HashMemTable;
import io.cobble.memtable.MemTable;
import io.cobble.memtable.MemTablePrefixFilter;
import io.cobble.memtable.SkipListMemTable;
import io.cobble.memtable.VecMemTable;
import io.cobble.row.ColumnLayout;
import io.cobble.row.Layouts;
import io.cobble.row.ValueLoader;
import io.cobble.sst.SharedTables;
import io.cobble.sst.Table;
import io.cobble.sst.TableOptions;
import io.cobble.sst.TableReadOptions;
import io.cobble.sst.WrittenMetadata;
import io.cobble.storage.DataFile;
import io.cobble.storage.Storage;
import io.cobble.util.DirectIo;
import io.cobble.version.RemotePrimary;
import io.cobble.version.VersionSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.LongUnaryOperator;

/**
 * What every part of one open shard shares: its directory and lock, configuration and clock, the
 * {@link VersionSet}, the block cache, the current schema's {@link Layouts}, the owned bucket
 * ranges, and the mutex that serialises every change of the version. The write path, the flusher,
 * the compaction scheduler and bucket expansion each hold this object and nothing of one another's
 * state.
 */
final class ShardState {
  final Path dir;
  final Config config;
  final Clock clock;
  final DirectoryLock lock;
  final BlockCache cache;
  final LongUnaryOperator cacheIds;
  final DirectIo directIo;
  final VersionSet versions;
  // Local files written without fsync under fsync.policy=snapshot, until a snapshot asks for them.
  final DeferredSync deferredSync;
  // The remote primary volume the working files live on; null when they live in dir.
  final RemotePrimary remote;
  final ValueLoader loader;
  final BucketOwnership ownership;
  final MemTableFold fold;
  final ReentrantLock mutex = new ReentrantLock();
  // Signalled whenever the version, a background task or the shard's state changes.
  final Condition changed = mutex.newCondition();
  private volatile Layouts layouts;
  // Per family id: the prefix length of new tables' prefix filters in table-key bytes (0 = none).
  private volatile int[] prefixFilterLengths = new int[0];
  // A memtable's prefix filter takes 1/256 of its capacity: 128 KB for 32 MB, about 16 bits per
  // prefix for maps of ten 50-byte rows per key.
  private static final int MEMTABLE_BYTES_PER_FILTER_BYTE = 256;
  // A vec memtable of at least 1/4 of its capacity whose writes stop when scans start is sealed
  // rather than converted: flushing it early costs one smaller L0 table, once per change from
  // writing to scanning (the next memtable starts as a skiplist when scans go on).
  private static final int SEAL_FOR_SCANS_FRACTION = 4;
  private volatile boolean closed;
  private volatile Throwable backgroundError;
  // A volume Db.open(VolumeSet, ...) opened for files used in place there; closed with the Db.
  private volatile Storage ownedVolume;
  // Set by Db.setCompactionFilter; read by each compaction.
  volatile CompactionFilter compactionFilter;
  private long memtableIds;
  // With no history yet, start append-only: the first read or scan converts cheaply.
  private MemTableType nextAdaptiveType = MemTableType.VEC;
  // Records the last sealed memtable held: the next one's index starts that large.
  private int lastSealedEntries;
  // Seals the active memtable when the buffers leave room (the Db's flusher); none until it exists.
  private volatile BooleanSupplier rotation = () -> false;

  ShardState(
      Path dir,
      Config config,
      DirectoryLock lock,
      BlockCache cache,
      LongUnaryOperator cacheIds,
      DirectIo directIo,
      VersionSet versions,
      RemotePrimary remote,
      Layouts layouts,
      int[] ownedRanges) {
    this.dir = dir;
    this.config = config;
    this.clock = config.clock();
    this.lock = lock;
    this.cache = cache;
    this.cacheIds = cacheIds;
    this.directIo = directIo;
    this.versions = versions;
    this.deferredSync = new DeferredSync(versions);
    this.remote = remote;
    this.loader = versions::loadValue;
    this.layouts = layouts;
    this.ownership = new BucketOwnership(dir, remote, config.totalBuckets(), ownedRanges);
    this.fold = new MemTableFold(this::layouts, loader);
  }

  Layouts layouts() {
    return layouts;
  }

  /** Installs the layouts of a new schema. Under the mutex. */
  void layouts(Layouts next) {
    layouts = next;
  }

  boolean closed() {
    return closed;
  }

  /** Marks the shard closed: background work stops at its next check. Under the mutex. */
  void markClosed() {
    closed = true;
  }

  Throwable backgroundError() {
    return backgroundError;
  }

  /** Records a background failure that disables writes. Under the mutex. */
  void failBackground(Throwable t) {
    backgroundError = t;
  }

  Storage ownedVolume() {
    return ownedVolume;
  }

  void ownedVolume(Storage volume) {
    ownedVolume = volume;
  }

  void checkOpen() {
    if (closed) {
      throw new IllegalStateException("Db " + dir + " is closed");
    }
  }

  void checkBackground() {
    Throwable bg = backgroundError;
    if (bg != null) {
      throw new CobbleException("background work failed: " + bg.getMessage(), bg);
    }
  }

  /** Waits up to 50 ms for a change. Under the mutex. */
  void awaitChange() {
    try {
      changed.await(50, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CobbleException("interrupted", e);
    }
  }

  /** A new empty memtable of the configured type. Under the mutex (or before the Db is shared). */
  MemTable newMemTable() {
    MemTable m = newMemTableOfType(++memtableIds);
    m.prefixFilter(
        new MemTablePrefixFilter(
            config.memtableCapacity() / MEMTABLE_BYTES_PER_FILTER_BYTE, this::familyPrefixLength));
    if (m instanceof AdaptiveMemTable) {
      ((AdaptiveMemTable) m)
          .sealForScans(config.memtableCapacity() / SEAL_FOR_SCANS_FRACTION, this::sealForScans);
    }
    return m;
  }

  /** Lets scans seal the active memtable through {@code rotation} (see {@link #sealForScans}). */
  void rotation(BooleanSupplier rotation) {
    this.rotation = rotation;
  }

  /**
   * Seals {@code m} for the scans that found it large, unordered and no longer written, when it is
   * still the active memtable, the shard is healthy and not frozen, and the buffers leave room for
   * one more sealed memtable; false otherwise. Takes the mutex.
   */
  private boolean sealForScans(MemTable m) {
    mutex.lock();
    try {
      return !closed
          && backgroundError == null
          && !versions.frozen()
          && versions.current().active() == m
          && rotation.getAsBoolean();
    } finally {
      mutex.unlock();
    }
  }

  private MemTable newMemTableOfType(long id) {
    switch (config.memtableType()) {
      case SKIPLIST:
        return new SkipListMemTable(id, fold);
      case HASH:
        return new HashMemTable(id, fold);
      case VEC:
        return new VecMemTable(id, fold, lastSealedEntries);
      default:
        return new AdaptiveMemTable(id, fold, nextAdaptiveType, lastSealedEntries, mutex);
    }
  }

  /** {@code family}'s prefix filter length in tree-key bytes, 0 = none. */
  private int familyPrefixLength(int family) {
    int[] prefixes = prefixFilterLengths;
    return family < prefixes.length ? prefixes[family] : 0;
  }

  /** Lets the next adaptive memtable start as the type {@code sealed} ended up as. */
  void noteSealed(MemTable sealed) {
    lastSealedEntries = sealed.entryCount();
    if (sealed instanceof AdaptiveMemTable) {
      nextAdaptiveType = ((AdaptiveMemTable) sealed).nextType();
    }
  }

  /** Opens a table; {@code size} comes from the manifest, or is -1 for a file just written. */
  Table openTable(long number, int level, long size) {
    return openTable(number, level, size, false);
  }

  /**
   * Opens a table; {@code fromManifest}: one the manifest names as the Db opens, whose metadata
   * {@link Config#backgroundMetadata} may leave to {@link BackgroundMetadata} or the first read.
   */
  Table openTable(long number, int level, long size, boolean fromManifest) {
    return openTable(number, level, size, fromManifest, null);
  }

  /**
   * Opens a table; {@code written}: the metadata of a file this shard's builder just finished,
   * which then opens without reading it back, or null.
   */
  private Table openTable(
      long number, int level, long size, boolean fromManifest, WrittenMetadata written) {
    MetadataCacheMode mode = config.metadataCacheMode();
    boolean pin = mode != MetadataCacheMode.OFF && level <= config.pinnedMetadataMaxLevel();
    TableReadOptions options =
        TableReadOptions.builder()
            .pinTopIndex(pin)
            .pinPartitions(config.pinPartitions())
            .lazyMetadata(
                mode == MetadataCacheMode.LAZY || (fromManifest && config.backgroundMetadata()))
            .directIo(directIo)
            .mmapReads(config.mmapReadsEnabled())
            .residentBlocks(config.residentBlocks())
            .build();
    DataFile file = versions.tableFile(number);
    SharedTables shared = config.sharedTables();
    if (shared != null && fromManifest && size >= 0) {
      return shared.open(
          file,
          size,
          () -> Table.open(file, size, cacheIds.applyAsLong(number), cache, options, null));
    }
    return Table.open(file, size, cacheIds.applyAsLong(number), cache, options, written);
  }

  /** Sets the prefix filter length (table-key bytes, 0 = none) of {@code family}'s new tables. */
  synchronized void prefixFilterLength(int family, int length) {
    int[] next =
        Arrays.copyOf(prefixFilterLengths, Math.max(prefixFilterLengths.length, family + 1));
    next[family] = length;
    prefixFilterLengths = next;
  }

  private TableOptions tableOptions(int level, int family) {
    return TableOptions.builder()
        .prefixFilterLength(familyPrefixLength(family))
        .blockSize(config.blockSize(hasMergeOperator(family)))
        .restartInterval(config.blockRestartInterval())
        .bloomBitsPerKey(config.bloomFilterEnabled() ? config.bloomBitsPerKey() : 0)
        .dataBlockHashIndex(config.dataBlockHashIndex())
        .partitionedIndex(config.partitionedIndex())
        .lz4(config.lz4ForLevel(level, hasMergeOperator(family)))
        .sync(config.fsyncOnPublish())
        .build();
  }

  /** A writer of {@code level} tables of {@code family}, uploaded (when remote) as they finish. */
  OutputWriter outputWriter(int family, int level, long targetSize) {
    return new OutputWriter(
        versions,
        family,
        layouts.schema().id(),
        tableOptions(level, family),
        targetSize,
        separationThreshold(family),
        (n, written) -> {
          upload(n, false);
          return openTable(n, level, -1, false, written);
        });
  }

  /** 0 (keep every value in the tables) for a merge family when such families do not separate. */
  private long separationThreshold(int family) {
    return !config.separateMergeFamilies() && hasMergeOperator(family)
        ? 0
        : config.valueSeparationThreshold();
  }

  private boolean hasMergeOperator(int family) {
    ColumnLayout layout = layouts.byId(family);
    for (int i = 0; layout != null && i < layout.size(); i++) {
      if (layout.operator(i) != null) {
        return true;
      }
    }
    return false;
  }

  /**
   * With a remote primary, uploads a finished output before any version edit names it; a failure
   * fails the flush or compaction, which then installs nothing.
   */
  void upload(long number, boolean vlog) {
    if (remote != null) {
      remote.upload(number, vlog, vlog ? versions.vlogPath(number) : versions.tablePath(number));
    } else if (config.fsyncEnabled() && !config.fsyncOnPublish()) {
      deferredSync.written(number, vlog);
    }
  }

  /** A factory of daemon threads named {@code name-1}, {@code name-2}, ... */
  static ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException ignored) {
      // Swept as an orphan on the next open.
    }
  }

  static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // Best effort during failure handling.
    }
  }
}
