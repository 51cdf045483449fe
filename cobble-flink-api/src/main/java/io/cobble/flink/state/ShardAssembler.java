package io.cobble.flink.state;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.schema.Column;
import io.cobble.schema.ColumnSpec;
import io.cobble.schema.FamilySchema;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotRestore;
import io.cobble.storage.file.FileStorage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.state.KeyGroupRange;

/**
 * Builds a shard for a changed key-group range from the manifests of other shards. This is the one
 * place that does it, so it can move to the engine's single entry point for opening a shard from
 * several snapshots: for now each source opens where its files were staged and the rows of the key
 * groups the target owns are written into the target.
 */
final class ShardAssembler {
  private ShardAssembler() {}

  static void absorb(
      Db target,
      KeyGroupRange targetRange,
      Path stagedFiles,
      Path sourceDir,
      ShardSnapshot source,
      Config sourceConfig)
      throws IOException {
    KeyGroupRange overlap =
        targetRange.getIntersection(
            KeyGroupRange.of(
                source.ranges().get(0).lo(), source.ranges().get(source.ranges().size() - 1).hi()));
    FileStorage volume = FileStorage.open(stagedFiles, false);
    SnapshotRestore.materialize(sourceDir, volume, source, sourceConfig, true);
    try (Db db = Db.open(sourceDir, sourceConfig, volume)) {
      for (FamilySchema family : db.schema().families()) {
        if (target.schema().family(family.name()) == null) {
          List<ColumnSpec> specs = new ArrayList<>();
          for (Column c : family.columns()) {
            specs.add(c.spec());
          }
          target.createFamily(family.name(), specs);
        }
        for (int kg = overlap.getStartKeyGroup(); kg <= overlap.getEndKeyGroup(); kg++) {
          try (ScanCursor c = db.scan(kg, family.name(), null, null, ScanOptions.defaults())) {
            while (c.hasNext()) {
              Row row = c.next();
              byte[][] columns = row.columns();
              for (int col = 0; col < columns.length; col++) {
                if (columns[col] != null) {
                  target.put(kg, family.name(), row.key(), col, columns[col]);
                }
              }
            }
          }
        }
      }
    }
    CobbleKeyedStateCore.deleteQuietly(sourceDir);
    CobbleKeyedStateCore.deleteQuietly(stagedFiles);
  }
}
