package io.cobble.flink.table.sink;

import static io.cobble.flink.table.sink.ShardWriterTest.CODEC;
import static io.cobble.flink.table.sink.ShardWriterTest.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.flink.table.layout.BucketRouter;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.reader.Reader;
import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The restore and rescale rules of {@link ShardStart} and the idempotent commits of {@link
 * GlobalCommit}, on the real engine and a {@code file://} table root.
 */
class ShardStartTest {

  private static final int BUCKETS = 16;

  @TempDir Path dir;

  private Storage table;
  private int localDirs;
  private long checkpoints;

  @BeforeEach
  void openTable() throws Exception {
    Files.createDirectories(dir.resolve("table"));
    table = StorageProviders.open(dir.resolve("table").toUri(), StorageOptions.empty());
  }

  @AfterEach
  void closeTable() throws Exception {
    table.close();
  }

  private Path localDir() {
    return dir.resolve("local-" + localDirs++);
  }

  /** One writer of a layout: opens its shard, writes its share of {@code rows}, snapshots it. */
  private ShardRef writeShard(
      TableLayout layout, int index, List<ShardRef> restored, Map<Long, String> rows) {
    return writeShard(layout, index, restored, rows, false);
  }

  private ShardRef writeShard(
      TableLayout layout,
      int index,
      List<ShardRef> restored,
      Map<Long, String> rows,
      boolean compact) {
    ShardStart start =
        ShardStart.open(
            table,
            layout,
            index,
            restored,
            localDir(),
            ShardConfig.of(layout, index, 1 << 20),
            CODEC.valueColumnCount());
    try (Db db = start.db();
        SnapshotManager snapshots = SnapshotManager.open(db, table, start.id().toString())) {
      ShardWriter writer =
          new ShardWriter(db, index, layout, CODEC, new UnregisteredMetricsGroup());
      rows.forEach(
          (id, name) -> {
            int bucket = BucketRouter.bucketOf(CODEC.key(row(RowKind.INSERT, id, "")), BUCKETS);
            if (layout.shardOf(bucket) == index) {
              writer.write(row(name == null ? RowKind.DELETE : RowKind.INSERT, id, name));
            }
          });
      if (compact) {
        db.compactAll();
      }
      long id = snapshots.snapshot().published().join().id();
      return ShardRef.of(start.id().toString(), id);
    }
  }

  private List<ShardRef> writeAll(TableLayout layout, Map<Long, String> rows) {
    List<ShardRef> refs = new ArrayList<>();
    for (int i = 0; i < layout.shardCount(); i++) {
      refs.add(writeShard(layout, i, Collections.emptyList(), rows));
    }
    return refs;
  }

  private void commit(List<ShardRef> refs) {
    assertTrue(new GlobalCommit(table, BUCKETS, 1).commit(toMap(refs), ++checkpoints).isPresent());
  }

  private static Map<String, Long> toMap(List<ShardRef> refs) {
    Map<String, Long> map = new HashMap<>();
    refs.forEach(r -> map.put(r.shardId(), r.snapshotId()));
    return map;
  }

  private static Map<Long, String> rows(long from, long to, String prefix) {
    Map<Long, String> rows = new TreeMap<>();
    for (long id = from; id <= to; id++) {
      rows.put(id, prefix + id);
    }
    return rows;
  }

  /** The table as a reader of its current global snapshot sees it. */
  private Map<Long, String> read() {
    Map<Long, String> out = new TreeMap<>();
    try (Reader reader =
        Reader.open(table, Config.builder().set("total-buckets", BUCKETS).build())) {
      for (int bucket = 0; bucket < BUCKETS; bucket++) {
        try (ScanCursor cursor =
            reader.scan(bucket, TableLayout.FAMILY, null, null, ScanOptions.DEFAULT)) {
          while (cursor.hasNext()) {
            Row stored = cursor.next();
            RowData row = CODEC.decode(stored.key(), stored.columns());
            assertEquals(null, out.put(row.getLong(0), row.getString(1).toString()));
          }
        }
      }
    }
    return out;
  }

  @Test
  void aNewTableStartsEmptyInGenerationOne() {
    TableLayout layout = new TableLayout(BUCKETS, 2);
    List<ShardRef> refs = writeAll(layout, rows(1, 100, "a"));
    assertEquals("g1-0of2", refs.get(0).shardId());
    assertEquals("g1-1of2", refs.get(1).shardId());
    commit(refs);
    assertEquals(rows(1, 100, "a"), read());
  }

  @Test
  void aRestoredWriterDropsWhatItWroteAfterItsSnapshot() {
    TableLayout layout = new TableLayout(BUCKETS, 2);
    List<ShardRef> first = writeAll(layout, rows(1, 100, "a"));
    commit(first);
    // Both writers go on past the checkpoint (snapshots taken, never committed) ...
    List<ShardRef> uncommitted = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      uncommitted.add(writeShard(layout, i, first, rows(1, 50, "lost")));
    }
    assertEquals(rows(1, 100, "a"), read());
    // ... then restart from the checkpoint's state: the later rows are gone, new ones land.
    List<ShardRef> restarted = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      restarted.add(writeShard(layout, i, first, rows(90, 110, "b")));
    }
    assertEquals(first.get(0).shardId(), restarted.get(0).shardId());
    assertTrue(restarted.get(0).snapshotId() > uncommitted.get(0).snapshotId());
    commit(restarted);
    Map<Long, String> expected = rows(1, 89, "a");
    expected.putAll(rows(90, 110, "b"));
    assertEquals(expected, read());
  }

  @Test
  void aNewJobContinuesFromTheCurrentGlobalSnapshot() {
    TableLayout layout = new TableLayout(BUCKETS, 3);
    commit(writeAll(layout, rows(1, 100, "a")));
    Map<Long, String> second = new TreeMap<>(rows(50, 150, "b"));
    second.put(7L, null);
    List<ShardRef> refs = writeAll(layout, second);
    assertEquals("g1-2of3", refs.get(2).shardId());
    commit(refs);
    Map<Long, String> expected = rows(1, 49, "a");
    expected.remove(7L);
    expected.putAll(rows(50, 150, "b"));
    assertEquals(expected, read());
  }

  @Test
  void aChangedWriterCountCutsNewRangesAndKeepsEveryRow() {
    commit(writeAll(new TableLayout(BUCKETS, 2), rows(1, 200, "a")));
    List<ShardRef> three = writeAll(new TableLayout(BUCKETS, 3), rows(150, 250, "b"));
    assertEquals("g2-1of3", three.get(1).shardId());
    commit(three);
    Map<Long, String> expected = rows(1, 149, "a");
    expected.putAll(rows(150, 250, "b"));
    assertEquals(expected, read());
    // Back to two writers: a new generation, so the ids never meet the first g1 shards.
    List<ShardRef> two = writeAll(new TableLayout(BUCKETS, 2), rows(1, 10, "c"));
    assertEquals("g3-0of2", two.get(0).shardId());
    commit(two);
    expected.putAll(rows(1, 10, "c"));
    assertEquals(expected, read());
  }

  @Test
  void committingTheSameSnapshotsTwicePublishesOnce() {
    TableLayout layout = new TableLayout(BUCKETS, 2);
    List<ShardRef> refs = writeAll(layout, rows(1, 10, "a"));
    GlobalCommit commits = new GlobalCommit(table, BUCKETS, 3);
    assertEquals(1, commits.commit(toMap(refs), 1).get().checkpointId());
    assertFalse(commits.commit(toMap(refs), 2).isPresent());
    // One shard reporting alone keeps the other's part of the current global snapshot.
    ShardRef next = writeShard(layout, 1, refs, rows(11, 20, "b"));
    assertEquals(2, commits.commit(toMap(Collections.singletonList(next)), 3).get().parts().size());
    assertFalse(commits.commit(toMap(refs), 4).isPresent());
    // A completed checkpoint without writes still names a global snapshot, once.
    GlobalSnapshot idle = commits.commit(toMap(Collections.singletonList(next)), 5, true).get();
    assertEquals(5, idle.checkpointId());
    assertEquals(2, idle.parts().size());
    assertFalse(commits.commit(toMap(Collections.singletonList(next)), 5, true).isPresent());
  }

  @Test
  void theOldGenerationGoesOnceNoRetainedSnapshotUsesItAndItsAdoptedFilesWhenUnused()
      throws Exception {
    TableLayout two = new TableLayout(BUCKETS, 2);
    List<ShardRef> first = writeAll(two, rows(1, 200, "a"));
    commit(first);
    List<ShardRef> second = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      second.add(writeShard(two, i, first, rows(150, 300, "b")));
    }
    commit(second);
    assertFalse(table.list("shards/g1-0of2/").isEmpty());

    TableLayout three = new TableLayout(BUCKETS, 3);
    List<ShardRef> rescaled = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      rescaled.add(writeShard(three, i, second, rows(290, 310, "c")));
    }
    commit(rescaled);
    Map<Long, String> expected = rows(1, 149, "a");
    expected.putAll(rows(150, 289, "b"));
    expected.putAll(rows(290, 310, "c"));
    assertEquals(expected, read());
    // Retention 1: no global snapshot uses generation 1 any more, so its shards are gone; of its
    // files only those the new shards adopted in place stay.
    SnapshotStore store = new SnapshotStore(table);
    assertEquals(List.of("g2-0of3", "g2-1of3", "g2-2of3"), store.shardIds());
    assertTrue(table.list("shards/g1-0of2/").isEmpty());
    assertTrue(table.list("shards/g1-1of2/").isEmpty());
    Set<String> referenced = referencedFiles(store);
    for (String file : table.list("data/")) {
      assertTrue(referenced.contains(file), file + " is on the table root but unreferenced");
    }

    // Once the new shards compact the adopted files away, the old generation's files go too.
    List<ShardRef> compacted = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      compacted.add(writeShard(three, i, rescaled, rows(400, 410, "d"), true));
    }
    commit(compacted);
    expected.putAll(rows(400, 410, "d"));
    assertEquals(expected, read());
    assertTrue(table.list("data/g1-0of2/").isEmpty(), table.list("data/").toString());
    assertTrue(table.list("data/g1-1of2/").isEmpty(), table.list("data/").toString());
    assertEquals(referencedFiles(store), new HashSet<>(table.list("data/")));
  }

  private static Set<String> referencedFiles(SnapshotStore store) {
    Set<String> out = new HashSet<>();
    for (String shard : store.shardIds()) {
      for (long id : store.snapshotIds(shard)) {
        store.require(shard, id).files().forEach(f -> out.add(f.volumePath()));
      }
    }
    return out;
  }
}
