package io.cobble.benchmarks.flinksql;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.snapshot.SnapshotReader;

/**
 * The shape of a Paimon table as its lookups start on it, as {@link CobbleTableShape} gives
 * Cobble's: the data files per level of the latest snapshot, summed over buckets. Paimon's writer
 * compacts in the background, so how many sorted runs a lookup merges depends on how far its
 * compaction got before the write ended.
 */
final class PaimonTableShape {
  private PaimonTableShape() {}

  static String describe(Path warehouse, String database, String table) {
    CatalogContext context =
        CatalogContext.create(new org.apache.paimon.fs.Path(warehouse.toUri().toString()));
    try (Catalog catalog = CatalogFactory.createCatalog(context)) {
      FileStoreTable store = (FileStoreTable) catalog.getTable(Identifier.create(database, table));
      SnapshotReader.Plan plan = store.newSnapshotReader().read();
      int[] perLevel = new int[1];
      int files = 0;
      long bytes = 0;
      for (DataSplit split : plan.dataSplits()) {
        for (DataFileMeta file : split.dataFiles()) {
          if (file.level() >= perLevel.length) {
            perLevel = Arrays.copyOf(perLevel, file.level() + 1);
          }
          perLevel[file.level()]++;
          files++;
          bytes += file.fileSize();
        }
      }
      return String.format(
          Locale.ROOT,
          "snapshot %d, %d data files (%.1f MB), per level %s",
          plan.snapshotId(),
          files,
          bytes / 1e6,
          Arrays.toString(perLevel));
    } catch (Exception e) {
      return "shape unknown (" + FlinkSqlBenchmark.rootMessage(e) + ")";
    }
  }
}
