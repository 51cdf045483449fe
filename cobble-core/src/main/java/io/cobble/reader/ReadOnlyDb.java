package io.cobble.reader;

import io.cobble.CobbleException;
import io.cobble.ColumnsRead;
import io.cobble.Config;
import io.cobble.Db;
import io.cobble.EngineOptions;
import io.cobble.ReadOptions;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.cache.BlockCache;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotRestore;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.sst.SharedTables;
import io.cobble.storage.Storage;
import io.cobble.util.ColumnsSink;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongUnaryOperator;
import java.util.stream.Stream;

/**
 * Reads one shard snapshot from any process, next to (never interfering with) the shard's writer.
 * The snapshot's files are read where they lie on the volume (local or object storage, blocks on
 * demand); a private scratch directory holds only the manifest. As its tables never change, a data
 * block a point read brings in stays in memory reserved from the block cache for as long as the
 * table is open, when its tables fit the cache ({@link io.cobble.Config.Builder#residentBlocks}).
 * Nothing is compacted or written back. The volume must stay open while this is open.
 */
public final class ReadOnlyDb implements AutoCloseable {
  private final ShardSnapshot snapshot;
  private final Path scratch;
  private final Db db;
  // Null when the reader keeps no row cache.
  private final RowCache rowCache;
  // The row cache's owner id of each projection read so far, so reads that alternate between
  // projections keep finding their results.
  private final Map<String, Long> rowCacheOwners = new ConcurrentHashMap<>();
  // The projection of the last projected point read, reused while reads ask for the same columns
  // (a lookup function asks for the same ones every time), so such a read builds none.
  private volatile LastProjection lastProjection;

  private ReadOnlyDb(ShardSnapshot snapshot, Path scratch, Db db, RowCache rowCache) {
    this.snapshot = snapshot;
    this.scratch = scratch;
    this.db = db;
    this.rowCache = rowCache;
  }

  /** Opens snapshot {@code snapshotId} of {@code shardId}; {@code config} supplies cache sizes. */
  public static ReadOnlyDb open(Storage volume, String shardId, long snapshotId, Config config) {
    ShardSnapshot s = new SnapshotStore(volume).require(shardId, snapshotId);
    BlockCache cache = new BlockCache(config.blockCacheSize());
    return open(volume, s, config, cache, n -> n, null, null, 1);
  }

  /** Opens the newest intact snapshot of {@code shardId}. */
  public static ReadOnlyDb openLatest(Storage volume, String shardId, Config config) {
    ShardSnapshot s = new SnapshotStore(volume).requireLatest(shardId);
    return open(volume, s, config, new BlockCache(config.blockCacheSize()), n -> n, null, null, 1);
  }

  /**
   * @param shards how many shards the caller reads in all, {@code s}'s among them: its tables keep
   *     the blocks point reads bring in ({@link Config.Builder#residentBlocks}) only when that many
   *     shards of {@code s}'s size would fit in the memory {@code cache} can set aside, so that a
   *     table much larger than the cache leaves the whole cache to its eviction order
   * @param tables the tables earlier Dbs of the caller have open, which this one reuses for the
   *     files it lists too; null to open every file anew
   */
  static ReadOnlyDb open(
      Storage volume,
      ShardSnapshot s,
      Config config,
      BlockCache cache,
      LongUnaryOperator cacheIds,
      RowCache rowCache,
      SharedTables tables,
      int shards) {
    Config readOnly =
        Config.builder()
            .setAll(config.values())
            .set(EngineOptions.TOTAL_BUCKETS.key(), s.totalBuckets())
            .set(EngineOptions.BUCKET_RANGES.key(), BucketRange.toConfigValue(s.ranges()))
            // Never due: the snapshot's shape is kept as it is.
            .set(EngineOptions.L0_FILE_LIMIT.key(), 1000)
            .set(EngineOptions.WRITE_STALL_LIMIT.key(), 100_000)
            .set(EngineOptions.LEVEL_BASE_SIZE.key(), Long.MAX_VALUE / 2048)
            .set(EngineOptions.DEFAULT_TTL.key(), 0)
            .clock(config.clock())
            .mergeOperatorResolver(config.mergeOperatorResolver())
            .residentBlocks(s.dataBytes() <= cache.reservable() / Math.max(1, shards))
            .sharedTables(tables)
            .build();
    Path scratch;
    try {
      scratch = Files.createTempDirectory("cobble-ro-" + s.shardId() + "-" + s.id() + "-");
    } catch (IOException e) {
      throw new CobbleException("cannot create a scratch directory for a read-only Db", e);
    }
    try {
      SnapshotRestore.materialize(scratch, volume, s, readOnly, false);
      Db db = Db.openSharingCache(scratch, readOnly, cache, cacheIds, volume);
      try {
        db.freeze();
      } catch (RuntimeException e) {
        db.close();
        throw e;
      }
      return new ReadOnlyDb(s, scratch, db, rowCache);
    } catch (RuntimeException e) {
      deleteTree(scratch);
      throw e;
    }
  }

  public ShardSnapshot snapshot() {
    return snapshot;
  }

  public List<BucketRange> ranges() {
    return snapshot.ranges();
  }

  public byte[][] get(int bucket, String family, byte[] key) {
    return db.get(bucket, family, key);
  }

  public byte[][] get(int bucket, String family, byte[] key, ReadOptions options) {
    return db.get(bucket, family, key, options);
  }

  public boolean readColumns(
      int bucket, String family, byte[] key, int[] columns, ColumnsSink sink) {
    return db.readColumns(bucket, family, key, columns, sink);
  }

  /**
   * {@code requested} over {@code family} of this shard, reused from the previous call if equal.
   */
  ColumnProjection projection(String family, int[] requested) {
    return projected(family, requested).columns;
  }

  /**
   * Reads the {@code requested} columns of {@code family} as {@link Reader#readColumns} does: those
   * this shard has, prepared once ({@link Db#prepareColumns}) while reads ask for the same ones.
   */
  boolean readRequested(int bucket, String family, byte[] key, int[] requested, ColumnsSink sink) {
    LastProjection p = projected(family, requested);
    if (p.read == null) {
      return false;
    }
    RowCache rows = rowCache;
    if (rows == null) {
      return db.readColumns(bucket, p.read, key, p.columns.toRequested(sink));
    }
    int cached = rows.read(p.rowCacheOwner, bucket, key, sink);
    if (cached != RowCache.NOT_CACHED) {
      return cached == RowCache.FOUND;
    }
    RowCache.Recorder recorder = rows.recorder(sink);
    boolean found = db.readColumns(bucket, p.read, key, p.columns.toRequested(recorder));
    rows.put(p.rowCacheOwner, bucket, key, recorder, found);
    return found;
  }

  private LastProjection projected(String family, int[] requested) {
    LastProjection last = lastProjection;
    if (last != null && last.family.equals(family) && Arrays.equals(last.requested, requested)) {
      return last;
    }
    int[] copy = requested.clone();
    ColumnProjection columns =
        ColumnProjection.of(copy, snapshot.schema().requireFamily(family).columnCount());
    ColumnsRead read = columns.empty() ? null : db.prepareColumns(family, columns.present());
    last =
        new LastProjection(
            family, copy, columns, read, rowCache == null ? 0 : rowCacheOwner(family, copy));
    lastProjection = last;
    return last;
  }

  private long rowCacheOwner(String family, int[] requested) {
    return rowCacheOwners.computeIfAbsent(
        family + Arrays.toString(requested), k -> rowCache.newOwner());
  }

  private static final class LastProjection {
    final String family;
    final int[] requested;
    final ColumnProjection columns;
    // The shard's columns prepared for reads; null when it has none of them.
    final ColumnsRead read;
    // Names this projection's results in the row cache, which no other projection shares.
    final long rowCacheOwner;

    LastProjection(
        String family,
        int[] requested,
        ColumnProjection columns,
        ColumnsRead read,
        long rowCacheOwner) {
      this.family = family;
      this.requested = requested;
      this.columns = columns;
      this.read = read;
      this.rowCacheOwner = rowCacheOwner;
    }
  }

  public List<byte[][]> multiGet(
      int bucket, String family, List<byte[]> keys, ReadOptions options) {
    return db.multiGet(bucket, family, keys, options);
  }

  public ScanCursor scan(int bucket, String family, byte[] start, byte[] end, ScanOptions options) {
    return db.scan(bucket, family, start, end, options);
  }

  /** {@link Db#scanPrefix}: the rows whose keys start with {@code prefix}. */
  public ScanCursor scanPrefix(int bucket, String family, byte[] prefix, ScanOptions options) {
    return db.scanPrefix(bucket, family, prefix, options);
  }

  @Override
  public void close() {
    try {
      db.close();
    } finally {
      deleteTree(scratch);
    }
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // A leftover scratch directory holds no data, only metadata copies.
    }
  }
}
