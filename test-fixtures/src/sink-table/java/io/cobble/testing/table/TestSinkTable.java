package io.cobble.testing.table;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.EngineOptions;
import io.cobble.WriteBatch;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.BucketRouter;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.schema.ColumnSpec;
import io.cobble.snapshot.GlobalSnapshotCoordinator;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/**
 * Writes a sink table the way the Cobble sink lays it out, through the engine: one Db per shard
 * (owning its contiguous bucket range), rows encoded by {@link RowCodec} into the {@code default}
 * family, shard snapshots on the table root as {@code shard-<i>}, global snapshots by the {@link
 * GlobalSnapshotCoordinator} and the inspect schema by {@link TableSchemaFile}.
 *
 * <p>Shared as source (cobble-test-fixtures' src/sink-table/java): cobble-flink-api's tests compile
 * it against the modules, the it-tests against the shaded dist jar, so it only uses the public API
 * the dist jar ships.
 */
public final class TestSinkTable implements AutoCloseable {

  private final Storage storage;
  private final TableLayout layout;
  private final RowCodec codec;
  private final List<Db> shards = new ArrayList<>();
  private final List<SnapshotManager> managers = new ArrayList<>();
  private final GlobalSnapshotCoordinator coordinator;
  private final WriteBatch batch = new WriteBatch();
  private long commits;

  /**
   * @param root the table root (the DDL's path)
   * @param work where the shards' working directories go
   * @param retention global snapshots the coordinator keeps (0: all)
   */
  public TestSinkTable(
      Path root,
      Path work,
      RowType rowType,
      List<String> primaryKey,
      int buckets,
      int shardCount,
      int retention)
      throws Exception {
    Files.createDirectories(root);
    storage = StorageProviders.open(root.toUri(), StorageOptions.empty());
    layout = new TableLayout(buckets, shardCount);
    int[] keyPositions = primaryKey.stream().mapToInt(rowType::getFieldIndex).toArray();
    codec = new RowCodec(rowType, keyPositions);
    List<String> types = new ArrayList<>();
    for (LogicalType type : rowType.getChildren()) {
      types.add(type.asSerializableString());
    }
    new TableSchemaFile(rowType.getFieldNames(), types, primaryKey, buckets, shardCount)
        .publish(storage);
    for (int shard = 0; shard < shardCount; shard++) {
      Db db =
          Db.open(
              work.resolve("shard-" + shard),
              Config.builder()
                  .set(EngineOptions.TOTAL_BUCKETS, buckets)
                  .set(EngineOptions.BUCKET_RANGES, layout.bucketRanges(shard))
                  .set(EngineOptions.MEMTABLE_CAPACITY, 64L << 10)
                  .build());
      for (int column = 1; column < codec.valueColumnCount(); column++) {
        db.addColumn(TableLayout.FAMILY, ColumnSpec.of("c" + column));
      }
      shards.add(db);
      managers.add(SnapshotManager.open(db, storage, "shard-" + shard));
    }
    coordinator = new GlobalSnapshotCoordinator(storage, buckets, retention);
  }

  /** Inserts or replaces a row given as Flink internal field objects, in table column order. */
  public void upsert(Object... fields) {
    GenericRowData row = GenericRowData.of(fields);
    byte[] key = codec.key(row);
    int bucket = BucketRouter.bucketOf(key, layout.bucketCount());
    byte[][] values = codec.values(row);
    batch.clear();
    for (int column = 0; column < values.length; column++) {
      batch.put(bucket, TableLayout.FAMILY, key, column, values[column]);
    }
    shards.get(layout.shardOf(bucket)).write(batch);
  }

  /** Deletes the row whose fields (only the key fields matter) are given. */
  public void delete(Object... fields) {
    byte[] key = codec.key(GenericRowData.of(fields));
    int bucket = BucketRouter.bucketOf(key, layout.bucketCount());
    shards.get(layout.shardOf(bucket)).deleteRow(bucket, TableLayout.FAMILY, key);
  }

  /** Flushes and compacts every shard fully (a table at rest, as after a long-running writer). */
  public void compactAll() {
    for (Db db : shards) {
      db.compactAll();
    }
  }

  /**
   * Snapshots every shard and publishes a global snapshot of them for checkpoint 1, 2, ... (as many
   * as this table has committed); returns its id.
   */
  public long commit() {
    return commit(++commits);
  }

  /** Like {@link #commit()}, recording Flink checkpoint {@code checkpointId}. */
  public long commit(long checkpointId) {
    List<ShardRef> refs = new ArrayList<>();
    for (SnapshotManager manager : managers) {
      long id = manager.snapshot().published().join().id();
      refs.add(ShardRef.of(manager.shardId(), id));
    }
    return coordinator.commit(refs, checkpointId).id();
  }

  @Override
  public void close() throws Exception {
    for (SnapshotManager manager : managers) {
      manager.close();
    }
    for (Db db : shards) {
      db.close();
    }
    storage.close();
  }
}
