package io.cobble.flink.table.sink;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.rescale.ShardOpenRequest;
import io.cobble.rescale.ShardOpener;
import io.cobble.schema.ColumnSpec;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.ShardRef;
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
 * an existing table), else nothing (a new table). The engine's {@link ShardOpener} opens the shard
 * from the base; this class decides only the sink's part: the shard id and which snapshots to pass.
 *
 * <ul>
 *   <li>Base written by as many writers as now: the writer resumes its shard (same id) from the
 *       base's snapshot of it, so whatever it wrote after that snapshot is gone (it is replayed).
 *   <li>Base written by another writer count: the writer opens a shard of the next generation
 *       owning its new contiguous bucket range, cut from the base snapshots that hold those buckets
 *       (their files are adopted where they lie, or their rows copied when files of different
 *       sources cannot be combined, as after an earlier rescale).
 *   <li>No base: an empty shard of generation 1.
 * </ul>
 */
final class ShardStart {
  private final Db db;
  private final ShardId id;
  private final Optional<Long> resumed;

  private ShardStart(Db db, ShardId id, Optional<Long> resumed) {
    this.db = db;
    this.id = id;
    this.resumed = resumed;
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
    return resumed;
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
    List<ShardRef> base = restored.isEmpty() ? currentGlobal(table) : restored;
    ShardId id;
    List<ShardRef> sources;
    if (base.isEmpty()) {
      id = new ShardId(1, index, layout.shardCount());
      sources = Collections.emptyList();
    } else {
      ShardId previous = ShardId.parse(base.get(0).shardId());
      if (previous.count() == layout.shardCount()) {
        id = new ShardId(previous.generation(), index, layout.shardCount());
        sources = Collections.singletonList(own(base, id));
      } else {
        id = new ShardId(previous.generation() + 1, index, layout.shardCount());
        sources = base;
      }
    }
    ShardOpener.Opened opened =
        ShardOpener.open(
            ShardOpenRequest.builder(table, localDir, id.toString(), config)
                .range(BucketRange.of(layout.firstBucket(index), layout.endBucket(index) - 1))
                .sources(sources)
                .build());
    try {
      addMissingColumns(opened.db(), valueColumns);
    } catch (RuntimeException e) {
      opened.db().close();
      throw e;
    }
    return new ShardStart(opened.db(), id, opened.resumedSnapshot());
  }

  private static ShardRef own(List<ShardRef> base, ShardId id) {
    return base.stream()
        .filter(ref -> ref.shardId().equals(id.toString()))
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "No snapshot of shard " + id + " among " + base + " to resume from."));
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
    Optional<GlobalSnapshot> current = store.currentGlobal();
    if (!current.isPresent()) {
      return Collections.emptyList();
    }
    List<ShardRef> refs = new ArrayList<>();
    for (GlobalSnapshot.Part part : current.get().parts()) {
      refs.add(ShardRef.of(part.shardId(), part.snapshotId()));
    }
    return refs;
  }
}
