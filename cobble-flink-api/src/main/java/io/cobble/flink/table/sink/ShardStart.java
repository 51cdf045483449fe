package io.cobble.flink.table.sink;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.WriteBatch;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.reader.ReadOnlyDb;
import io.cobble.rescale.Rescale;
import io.cobble.schema.ColumnSpec;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotRestore;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * Where a sink writer's shard starts from. The base is the shard snapshots recorded in the restored
 * Flink state (a restart from a checkpoint), else the table's current global snapshot (a new job on
 * an existing table), else nothing (a new table).
 *
 * <ul>
 *   <li>Base written by as many writers as now: the writer resumes its shard (same id) from the
 *       base's snapshot of it, so whatever it wrote after that snapshot is gone (it is replayed).
 *   <li>Base written by another writer count: the writer opens a shard of the next generation
 *       owning its new contiguous bucket range, cut from the base snapshots that hold those buckets
 *       ({@link Rescale#expandBuckets}: the files are adopted where they lie). When those sources
 *       cannot be combined file by file (a source file also holds buckets another source serves, as
 *       after an earlier rescale), the writer copies the rows of its range into a new shard.
 *   <li>No base: an empty shard of generation 1.
 * </ul>
 */
final class ShardStart {

  /** Block cache of the source snapshots while rows are copied into a rescaled shard. */
  private static final long COPY_CACHE = 8L << 20;

  private final Db db;
  private final ShardId id;
  private final long snapshotId;

  private ShardStart(Db db, ShardId id, long snapshotId) {
    this.db = db;
    this.id = id;
    this.snapshotId = snapshotId;
  }

  /** The opened shard; its owner closes it. */
  Db db() {
    return db;
  }

  ShardId id() {
    return id;
  }

  /** The snapshot the shard resumed from, which stays until a global snapshot covers it. */
  Optional<Long> resumedSnapshot() {
    return snapshotId > 0 ? Optional.of(snapshotId) : Optional.empty();
  }

  /**
   * Opens writer {@code index}'s shard in the empty {@code localDir}, with {@code valueColumns}
   * Cobble columns in the table's family.
   */
  static ShardStart open(
      Storage table,
      TableLayout layout,
      int index,
      List<ShardRef> restored,
      Path localDir,
      Config config,
      int valueColumns) {
    ShardStart start = open(table, layout, index, restored, localDir, config);
    try {
      addMissingColumns(start.db, valueColumns);
    } catch (RuntimeException e) {
      start.db.close();
      throw e;
    }
    return start;
  }

  private static ShardStart open(
      Storage table,
      TableLayout layout,
      int index,
      List<ShardRef> restored,
      Path localDir,
      Config config) {
    List<ShardRef> base = restored.isEmpty() ? currentGlobal(table) : restored;
    if (base.isEmpty()) {
      return new ShardStart(
          Db.open(localDir, config), new ShardId(1, index, layout.shardCount()), 0);
    }
    ShardId previous = ShardId.parse(base.get(0).shardId());
    if (previous.count() == layout.shardCount()) {
      ShardId id = new ShardId(previous.generation(), index, layout.shardCount());
      ShardRef own =
          base.stream()
              .filter(ref -> ref.shardId().equals(id.toString()))
              .findFirst()
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "No snapshot of shard " + id + " among " + base + " to resume from."));
      Db db = SnapshotRestore.resume(localDir, table, own.shardId(), own.snapshotId(), config);
      return new ShardStart(db, id, own.snapshotId());
    }
    ShardId id = new ShardId(previous.generation() + 1, index, layout.shardCount());
    BucketRange owned = BucketRange.of(layout.firstBucket(index), layout.endBucket(index) - 1);
    List<ShardRef> sources = new ArrayList<>();
    SnapshotStore store = new SnapshotStore(table);
    for (ShardRef ref : base) {
      for (BucketRange range : store.require(ref.shardId(), ref.snapshotId()).ranges()) {
        if (range.overlaps(owned)) {
          sources.add(ref);
          break;
        }
      }
    }
    List<BucketRange> ranges = Collections.singletonList(owned);
    if (fitFileByFile(store, sources, owned)) {
      Db db = Rescale.expandBuckets(localDir, table, sources, ranges, id.toString(), config);
      return new ShardStart(db, id, 0);
    }
    return new ShardStart(copy(table, sources, owned, localDir, config), id, 0);
  }

  /**
   * Whether every table file of the sources holds only buckets of its own source's ranges, which
   * {@link Rescale#expandBuckets} needs to combine several sources without rewriting. Files record
   * their smallest and largest internal key, which starts with the big-endian bucket.
   */
  private static boolean fitFileByFile(
      SnapshotStore store, List<ShardRef> sources, BucketRange owned) {
    if (sources.size() == 1) {
      return true;
    }
    for (ShardRef ref : sources) {
      ShardSnapshot snapshot = store.require(ref.shardId(), ref.snapshotId());
      for (SnapshotFile file : snapshot.files()) {
        if (file.isVlog()) {
          continue;
        }
        BucketRange span =
            BucketRange.of(
                bucketOf(file.properties().smallest()), bucketOf(file.properties().largest()));
        boolean inside = false;
        for (BucketRange range : snapshot.ranges()) {
          inside |= range.contains(span);
        }
        if (!inside) {
          return false;
        }
      }
    }
    return true;
  }

  private static int bucketOf(byte[] internalKey) {
    return ((internalKey[0] & 0xff) << 8) | (internalKey[1] & 0xff);
  }

  /** A new shard holding the rows of {@code owned} read from the source snapshots. */
  private static Db copy(
      Storage table, List<ShardRef> sources, BucketRange owned, Path localDir, Config config) {
    Db db = Db.open(localDir, config);
    try {
      Config reading =
          Config.builder()
              .setAll(config.values())
              .set(io.cobble.EngineOptions.BLOCK_CACHE_SIZE, COPY_CACHE)
              .build();
      WriteBatch batch = new WriteBatch();
      for (ShardRef ref : sources) {
        try (ReadOnlyDb source = ReadOnlyDb.open(table, ref.shardId(), ref.snapshotId(), reading)) {
          for (BucketRange range : source.ranges()) {
            for (int bucket = Math.max(range.lo(), owned.lo());
                bucket <= Math.min(range.hi(), owned.hi());
                bucket++) {
              copyBucket(source, bucket, db, batch);
            }
          }
        }
      }
      return db;
    } catch (RuntimeException e) {
      db.close();
      throw e;
    }
  }

  private static void copyBucket(ReadOnlyDb source, int bucket, Db target, WriteBatch batch) {
    try (ScanCursor rows =
        source.scan(bucket, TableLayout.FAMILY, null, null, ScanOptions.DEFAULT)) {
      while (rows.hasNext()) {
        Row row = rows.next();
        byte[][] columns = row.columns();
        addMissingColumns(target, columns.length);
        batch.clear();
        for (int column = 0; column < columns.length; column++) {
          if (columns[column] != null) {
            batch.put(bucket, TableLayout.FAMILY, row.key(), column, columns[column]);
          }
        }
        target.write(batch);
      }
    }
  }

  /** Gives the family {@code columns} Cobble columns; a new Db starts with one. */
  private static void addMissingColumns(Db db, int columns) {
    int present = db.schema().requireFamily(TableLayout.FAMILY).columnCount();
    for (int column = present; column < columns; column++) {
      db.addColumn(TableLayout.FAMILY, ColumnSpec.of("c" + column));
    }
  }

  private static List<ShardRef> currentGlobal(Storage table) {
    SnapshotStore store = new SnapshotStore(table);
    Optional<Long> current = store.currentGlobalId();
    if (!current.isPresent()) {
      return Collections.emptyList();
    }
    List<ShardRef> refs = new ArrayList<>();
    for (GlobalSnapshot.Part part : store.requireGlobal(current.get()).parts()) {
      refs.add(ShardRef.of(part.shardId(), part.snapshotId()));
    }
    return refs;
  }
}
