package io.cobble.benchmarks.flinksql;

import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * The shape of a Cobble table as a lookup sees it: the table files per level of the current global
 * snapshot, summed over its shards, and how many file numbers the writers used (flush and
 * compaction outputs, a load-independent measure of the write work). A lookup's cost per probe
 * grows with the level-0 files and levels it checks, and how far compaction got before the writer
 * closed depends on the machine's load, so every lookup run prints the shape it started on.
 */
final class CobbleTableShape {
  private CobbleTableShape() {}

  static String describe(Path dir) {
    try (Storage storage = StorageProviders.open(dir.toUri(), StorageOptions.empty())) {
      SnapshotStore store = new SnapshotStore(storage);
      GlobalSnapshot global = store.requireGlobal(store.requireCurrentGlobalId());
      int[] perLevel = new int[8];
      int tables = 0;
      long bytes = 0;
      long fileNumbers = 0;
      for (GlobalSnapshot.Part part : global.parts()) {
        ShardSnapshot shard = store.require(part.shardId(), part.snapshotId());
        fileNumbers += shard.nextFileNumber();
        for (SnapshotFile f : shard.files()) {
          if (f.isVlog()) {
            continue;
          }
          if (f.level() >= perLevel.length) {
            perLevel = Arrays.copyOf(perLevel, f.level() + 1);
          }
          perLevel[f.level()]++;
          tables++;
          bytes += f.size();
        }
      }
      int deepest = perLevel.length - 1;
      while (deepest > 0 && perLevel[deepest] == 0) {
        deepest--;
      }
      return String.format(
          Locale.ROOT,
          "%d shards, %d table files (%.1f MB), per level %s, file numbers used %d",
          global.parts().size(),
          tables,
          bytes / 1e6,
          Arrays.toString(Arrays.copyOf(perLevel, deepest + 1)),
          fileNumbers);
    } catch (Exception e) {
      return "shape unknown (" + FlinkSqlBenchmark.rootMessage(e) + ")";
    }
  }
}
