package io.cobble.flink.catalog;

import io.cobble.flink.table.CobbleDynamicTableFactory;
import io.cobble.flink.table.CobbleSinkOptions;
import io.cobble.flink.table.CobbleSourceOptions;
import io.cobble.flink.table.CobbleTableOptions;
import io.cobble.flink.table.TableStorage;
import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;

/**
 * The table factory of a Cobble catalog's tables ({@code Catalog#getFactory}): it fills in the
 * options a table's DDL has not got (its path under the catalog, the catalog's bucket count and
 * storage settings) and builds the same source and sink as {@code connector = 'cobble'} does. A
 * query may add job settings as {@code /*+ OPTIONS(...) *}{@code /} hints; nothing else.
 *
 * <p>The catalog's metadata is the authority on the schema: before building, the table's published
 * inspect schema is brought in line with it (after an ALTER TABLE), keeping the writer count the
 * last sink recorded there. A catalog table keeps that writer count: a sink with another {@code
 * sink.parallelism} is rejected.
 */
final class CatalogTableFactory implements DynamicTableSourceFactory, DynamicTableSinkFactory {

  /** A catalog sink writes with one writer unless a hint says otherwise. */
  private static final int DEFAULT_WRITERS = 1;

  private final CobbleCatalog catalog;
  private final CobbleDynamicTableFactory connector = new CobbleDynamicTableFactory();

  CatalogTableFactory(CobbleCatalog catalog) {
    this.catalog = catalog;
  }

  @Override
  public String factoryIdentifier() {
    return CobbleDynamicTableFactory.IDENTIFIER;
  }

  @Override
  public Set<ConfigOption<?>> requiredOptions() {
    return Collections.emptySet();
  }

  @Override
  public Set<ConfigOption<?>> optionalOptions() {
    return new HashSet<>(
        Arrays.asList(
            CobbleSinkOptions.SINK_PARALLELISM,
            CobbleSinkOptions.SNAPSHOT_RETENTION,
            CobbleSinkOptions.SINK_USE_MANAGED_MEMORY_ALLOCATOR,
            CobbleSinkOptions.SINK_WRITER_BUFFER_MEMORY,
            CobbleSinkOptions.SINK_COMPACT_AT_END_OF_INPUT,
            CobbleSourceOptions.SCAN_CHECKPOINT_ID,
            CobbleSourceOptions.SCAN_POLL_INTERVAL_MS,
            CobbleSourceOptions.SCAN_SNAPSHOT_LEASE_MS,
            CobbleSourceOptions.SOURCE_BLOCK_CACHE_MEMORY,
            CobbleSourceOptions.SOURCE_ROW_CACHE_MEMORY));
  }

  @Override
  public DynamicTableSink createDynamicTableSink(Context context) {
    FactoryUtil.createTableFactoryHelper(this, context).validate();
    ObjectIdentifier id = context.getObjectIdentifier();
    CatalogTableEntry entry = catalog.entryFor(id);
    TableStorage storage = storageOf(entry);
    TableSchemaFile published = syncSchema(id, entry, storage, context);
    Map<String, String> options = tableOptions(entry, context.getCatalogTable().getOptions());
    int writers =
        context.getCatalogTable().getOptions().containsKey(CobbleSinkOptions.SINK_PARALLELISM.key())
            ? parseWriters(options.get(CobbleSinkOptions.SINK_PARALLELISM.key()))
            : DEFAULT_WRITERS;
    options.put(CobbleSinkOptions.SINK_PARALLELISM.key(), Integer.toString(writers));
    if (published.shardCount() > 0 && published.shardCount() != writers) {
      throw new ValidationException(
          "Catalog table "
              + id.asSummaryString()
              + " was written with "
              + published.shardCount()
              + " writers, and a catalog table keeps its writer parallelism: write it with"
              + " /*+ OPTIONS('"
              + CobbleSinkOptions.SINK_PARALLELISM.key()
              + "' = '"
              + published.shardCount()
              + "') */ (it is "
              + writers
              + (context
                      .getCatalogTable()
                      .getOptions()
                      .containsKey(CobbleSinkOptions.SINK_PARALLELISM.key())
                  ? ""
                  : ", the catalog default")
              + "). Tables of connector = 'cobble' outside the catalog can change it.");
    }
    return connector.createDynamicTableSink(withOptions(context, options));
  }

  @Override
  public DynamicTableSource createDynamicTableSource(Context context) {
    FactoryUtil.createTableFactoryHelper(this, context).validate();
    ObjectIdentifier id = context.getObjectIdentifier();
    CatalogTableEntry entry = catalog.entryFor(id);
    TableStorage storage = storageOf(entry);
    syncSchema(id, entry, storage, context);
    if (!hasSnapshot(storage)) {
      throw new ValidationException(
          "Catalog table "
              + id.asSummaryString()
              + " has no committed rows yet: reads and lookups need the first INSERT INTO it to"
              + " finish (or commit a checkpoint) first.");
    }
    Map<String, String> options = tableOptions(entry, context.getCatalogTable().getOptions());
    options.put(CobbleSourceOptions.SOURCE_KIND.key(), "sink");
    return connector.createDynamicTableSource(withOptions(context, options));
  }

  private static int parseWriters(String value) {
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new ValidationException(
          "Option '" + CobbleSinkOptions.SINK_PARALLELISM.key() + "' must be an integer.");
    }
  }

  private TableStorage storageOf(CatalogTableEntry entry) {
    return TableStorage.fromTableOptions(
        catalog.location().tableRoot(entry.id()), catalog.location().storageTableOptions());
  }

  /** The hints, plus what the catalog knows: path, bucket count, storage settings. */
  private Map<String, String> tableOptions(CatalogTableEntry entry, Map<String, String> hints) {
    Map<String, String> options = new HashMap<>(hints);
    URI root = catalog.location().tableRoot(entry.id());
    options.put(CobbleTableOptions.PATH.key(), root.toString());
    options.put(CobbleTableOptions.BUCKET.key(), Integer.toString(entry.schema().bucketCount()));
    options.putAll(catalog.location().storageTableOptions());
    return options;
  }

  /**
   * Makes the table's published schema the catalog's (keeping the writer count recorded there) and
   * returns it; the statement's view of the table must still be the catalog's.
   */
  private static TableSchemaFile syncSchema(
      ObjectIdentifier id, CatalogTableEntry entry, TableStorage table, Context context) {
    TableSchemaFile.of(context.getCatalogTable().getResolvedSchema(), 0, 0)
        .firstColumnMismatch(entry.schema())
        .ifPresent(
            mismatch -> {
              throw new ValidationException(
                  "Catalog table "
                      + id.asSummaryString()
                      + " changed while this statement was planned ("
                      + mismatch
                      + "); run the statement again.");
            });
    try (Storage storage = table.open()) {
      Optional<TableSchemaFile> published = TableSchemaFile.read(storage);
      TableSchemaFile wanted =
          entry.schema().withShardCount(published.map(TableSchemaFile::shardCount).orElse(0));
      if (!published.isPresent() || !published.get().equals(wanted)) {
        wanted.publish(storage);
      }
      return wanted;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot publish the schema of catalog table " + id.asSummaryString(), e);
    }
  }

  private static boolean hasSnapshot(TableStorage table) {
    try (Storage storage = table.open()) {
      return new SnapshotStore(storage).currentGlobalId().isPresent();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the Cobble table at " + table.root(), e);
    }
  }

  private static Context withOptions(Context context, Map<String, String> options) {
    return new FactoryUtil.DefaultDynamicTableContext(
        context.getObjectIdentifier(),
        context.getCatalogTable().copy(options),
        context.getEnrichmentOptions(),
        context.getConfiguration(),
        context.getClassLoader(),
        context.isTemporary());
  }
}
