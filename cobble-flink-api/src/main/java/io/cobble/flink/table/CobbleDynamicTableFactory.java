package io.cobble.flink.table;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.flink.table.sink.CobbleDynamicTableSink;
import io.cobble.flink.table.source.CobbleDynamicTableSource;
import io.cobble.flink.table.source.LookupSettings;
import io.cobble.flink.table.source.SourceSettings;
import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.logical.RowType;

/** The {@code connector = 'cobble'} factory: validates every option before anything runs. */
public final class CobbleDynamicTableFactory
    implements DynamicTableSourceFactory, DynamicTableSinkFactory {

  public static final String IDENTIFIER = "cobble";

  @Override
  public String factoryIdentifier() {
    return IDENTIFIER;
  }

  @Override
  public Set<ConfigOption<?>> requiredOptions() {
    return new HashSet<>(Arrays.asList(CobbleTableOptions.PATH));
  }

  @Override
  public Set<ConfigOption<?>> optionalOptions() {
    // One table is often both written and read, so sink and source options are accepted on both.
    return new HashSet<>(
        Arrays.asList(
            CobbleTableOptions.BUCKET,
            CobbleSinkOptions.SINK_PARALLELISM,
            CobbleSinkOptions.SNAPSHOT_RETENTION,
            CobbleSinkOptions.SINK_USE_MANAGED_MEMORY_ALLOCATOR,
            CobbleSinkOptions.SINK_WRITER_BUFFER_MEMORY,
            CobbleSinkOptions.SINK_COMPACT_AT_END_OF_INPUT,
            CobbleSourceOptions.SOURCE_KIND,
            CobbleSourceOptions.SCAN_CHECKPOINT_ID,
            CobbleSourceOptions.SCAN_MODE,
            CobbleSourceOptions.SCAN_POLL_INTERVAL_MS,
            CobbleSourceOptions.SCAN_SNAPSHOT_LEASE_MS,
            CobbleSourceOptions.SOURCE_BLOCK_CACHE_MEMORY,
            CobbleSourceOptions.SOURCE_ROW_CACHE_MEMORY,
            CobbleSourceOptions.STATE_NAME,
            CobbleSourceOptions.STATE_OPERATOR_ID,
            CobbleSourceOptions.STATE_KIND,
            CobbleSourceOptions.RAW_COLUMNS,
            CobbleSourceOptions.LOOKUP_ASYNC,
            CobbleSourceOptions.LOOKUP_ASYNC_MAX_IN_FLIGHT));
  }

  @Override
  public DynamicTableSink createDynamicTableSink(Context context) {
    ShimLoader.current();
    FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
    helper.validateExcept(CobbleTableOptions.STORAGE_OPTION_PREFIX);
    ReadableConfig options = helper.getOptions();
    URI root = TablePaths.normalize(options.get(CobbleTableOptions.PATH));
    int buckets = requirePositive(options, CobbleTableOptions.BUCKET);
    int writers = requirePositive(options, CobbleSinkOptions.SINK_PARALLELISM);
    int retention = requirePositiveOrDefault(options, CobbleSinkOptions.SNAPSHOT_RETENTION);
    MemorySize buffer = options.get(CobbleSinkOptions.SINK_WRITER_BUFFER_MEMORY);
    if (buffer.getBytes() <= 0) {
      throw new ValidationException(
          "Option '" + CobbleSinkOptions.SINK_WRITER_BUFFER_MEMORY.key() + "' must be > 0.");
    }
    if (writers > buckets) {
      throw new ValidationException(
          "Option '"
              + CobbleSinkOptions.SINK_PARALLELISM.key()
              + "' ("
              + writers
              + ") must not exceed '"
              + CobbleTableOptions.BUCKET.key()
              + "' ("
              + buckets
              + "): each writer owns at least one bucket. Lower sink.parallelism or raise"
              + " bucket.");
    }
    ResolvedSchema schema = context.getCatalogTable().getResolvedSchema();
    KeyedTableRules.check(schema, "sink");
    TableSchemaFile ddl = TableSchemaFile.of(schema, buckets, writers);
    TableStorage table =
        TableStorage.fromTableOptions(root, context.getCatalogTable().getOptions());
    Optional<TableSchemaFile> published = readPublishedSchema(table);
    published.ifPresent(stored -> checkSinkAgainst(stored, ddl, root));
    // Columns keep the Cobble columns the table stores them in (moved by a catalog's ALTER TABLE).
    TableSchemaFile declared = published.map(ddl::withSlotsOf).orElse(ddl);
    return new CobbleDynamicTableSink(
        table,
        declared,
        (RowType) schema.toPhysicalRowDataType().getLogicalType(),
        buffer.getBytes(),
        options.get(CobbleSinkOptions.SINK_USE_MANAGED_MEMORY_ALLOCATOR),
        retention,
        options.get(CobbleSinkOptions.SINK_COMPACT_AT_END_OF_INPUT));
  }

  @Override
  public DynamicTableSource createDynamicTableSource(Context context) {
    ShimLoader.current();
    FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
    helper.validateExcept(CobbleTableOptions.STORAGE_OPTION_PREFIX);
    ReadableConfig options = helper.getOptions();
    URI root = TablePaths.normalize(options.get(CobbleTableOptions.PATH));
    SourceKind declared = SourceOptionsValidator.validate(options);
    ResolvedSchema schema = context.getCatalogTable().getResolvedSchema();
    TableStorage table =
        TableStorage.fromTableOptions(root, context.getCatalogTable().getOptions());
    int[] rawColumns = null;
    if (declared == SourceKind.RAW) {
      RawTableRules.checkSchema(schema);
      rawColumns = RawTableRules.columns(options);
    }
    SourceKind kind = declared == SourceKind.AUTO ? SourceKindResolver.resolve(table) : declared;
    if (kind == SourceKind.STATE) {
      throw new ValidationException(
          "Option '"
              + CobbleSourceOptions.SOURCE_KIND.key()
              + "' = 'state'"
              + (declared == SourceKind.AUTO
                  ? " (detected from the checkpoint at " + root + ")"
                  : "")
              + ": reading Flink state written by the Cobble state backend is not available yet;"
              + " read a Cobble sink table ('sink') or a Cobble table as bytes ('raw').");
    }
    TableSchemaFile published =
        kind == SourceKind.SINK ? checkSinkSource(schema, table, options) : null;
    SourceColumns columns =
        published == null ? null : SourceColumns.match(schema, published, table.root().toString());
    long checkpointId = SourceOptionsValidator.checkpointId(options);
    ScanMode mode = ScanMode.parse(options.get(CobbleSourceOptions.SCAN_MODE));
    Optional<GlobalSnapshot> snapshot =
        TableSnapshots.check(table, checkpointId, mode == ScanMode.STREAMING);
    long globalId = checkpointId == 0 ? SourceSettings.LATEST : snapshot.get().id();
    SourceSettings settings =
        new SourceSettings(
            table,
            globalId,
            mode,
            options.get(CobbleSourceOptions.SCAN_POLL_INTERVAL_MS),
            options.get(CobbleSourceOptions.SOURCE_BLOCK_CACHE_MEMORY).getBytes(),
            options.get(CobbleSourceOptions.SOURCE_ROW_CACHE_MEMORY).getBytes(),
            options.get(CobbleSourceOptions.SCAN_SNAPSHOT_LEASE_MS));
    RowType rowType = (RowType) schema.toPhysicalRowDataType().getLogicalType();
    if (kind == SourceKind.RAW) {
      if (snapshot.isPresent()) {
        checkRawAgainst(snapshot.get(), table, options, rawColumns);
      }
      return CobbleDynamicTableSource.raw(settings, rowType, rawColumns);
    }
    return CobbleDynamicTableSource.sinkTable(
        settings,
        rowType,
        columns.keyPositions(),
        published.bucketCount(),
        columns.slots(),
        new LookupSettings(
            options.get(CobbleSourceOptions.LOOKUP_ASYNC),
            options.get(CobbleSourceOptions.LOOKUP_ASYNC_MAX_IN_FLIGHT)));
  }

  /** A raw source: {@code bucket} and {@code raw.columns} must fit the table's snapshot. */
  private static void checkRawAgainst(
      GlobalSnapshot snapshot, TableStorage table, ReadableConfig options, int[] rawColumns) {
    options
        .getOptional(CobbleTableOptions.BUCKET)
        .filter(bucket -> bucket != snapshot.totalBuckets())
        .ifPresent(
            bucket -> {
              throw new ValidationException(
                  "Option 'bucket' is "
                      + bucket
                      + " but the Cobble table at '"
                      + table.root()
                      + "' has "
                      + snapshot.totalBuckets()
                      + " buckets; leave 'bucket' out or set it to "
                      + snapshot.totalBuckets()
                      + ".");
            });
    int columns = TableSnapshots.columnCount(table, snapshot);
    for (int column : rawColumns) {
      if (column >= columns) {
        throw new ValidationException(
            "Option '"
                + CobbleSourceOptions.RAW_COLUMNS.key()
                + "' lists column "
                + column
                + ", but the rows of the Cobble table at '"
                + table.root()
                + "' have "
                + columns
                + " columns (0 to "
                + (columns - 1)
                + ").");
      }
    }
  }

  /**
   * A sink-table source: a published schema must exist and the bucket count fit; the columns are
   * matched by {@link SourceColumns}.
   */
  private static TableSchemaFile checkSinkSource(
      ResolvedSchema schema, TableStorage table, ReadableConfig options) {
    KeyedTableRules.check(schema, "sink");
    TableSchemaFile published =
        readPublishedSchema(table)
            .orElseThrow(
                () ->
                    new ValidationException(
                        "No Cobble sink table at '"
                            + table.root()
                            + "' (no "
                            + TableSchemaFile.PATH
                            + "). Check 'path', or write the table with the Cobble sink first."));
    options
        .getOptional(CobbleTableOptions.BUCKET)
        .filter(bucket -> bucket != published.bucketCount())
        .ifPresent(
            bucket -> {
              throw new ValidationException(
                  "Option 'bucket' is "
                      + bucket
                      + " but the table at '"
                      + table.root()
                      + "' has "
                      + published.bucketCount()
                      + " buckets; leave 'bucket' out or set it to "
                      + published.bucketCount()
                      + ".");
            });
    return published;
  }

  /**
   * A sink into an existing table: same columns and bucket count. The writer count may change: the
   * writers then cut the new bucket ranges from the table's last snapshot.
   */
  private static void checkSinkAgainst(
      TableSchemaFile published, TableSchemaFile declared, URI root) {
    published
        .firstColumnMismatch(declared)
        .ifPresent(
            mismatch -> {
              throw new ValidationException(
                  "The DDL does not match the Cobble table already at '"
                      + root
                      + "': "
                      + mismatch
                      + ". Declare the table as written, or write to a new 'path'.");
            });
    if (published.bucketCount() != declared.bucketCount()) {
      throw new ValidationException(
          "Option 'bucket' is "
              + declared.bucketCount()
              + " but the table at '"
              + root
              + "' was written with "
              + published.bucketCount()
              + " buckets; the bucket count of a table is fixed. Set 'bucket' = '"
              + published.bucketCount()
              + "'.");
    }
  }

  private static Optional<TableSchemaFile> readPublishedSchema(TableStorage table) {
    try (Storage storage = table.open()) {
      return TableSchemaFile.read(storage);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the Cobble table schema at " + table.root(), e);
    }
  }

  private static int requirePositive(ReadableConfig options, ConfigOption<Integer> option) {
    Integer value =
        options
            .getOptional(option)
            .orElseThrow(
                () ->
                    new ValidationException(
                        "Option '" + option.key() + "' is required for a Cobble sink table."));
    if (value <= 0) {
      throw new ValidationException(
          "Option '" + option.key() + "' must be > 0, but is " + value + ".");
    }
    return value;
  }

  private static int requirePositiveOrDefault(
      ReadableConfig options, ConfigOption<Integer> option) {
    int value = options.get(option);
    if (value <= 0) {
      throw new ValidationException(
          "Option '" + option.key() + "' must be > 0, but is " + value + ".");
    }
    return value;
  }
}
