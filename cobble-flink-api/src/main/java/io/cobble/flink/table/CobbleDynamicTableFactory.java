package io.cobble.flink.table;

import io.cobble.CobbleVersion;
import io.cobble.flink.ShimLoader;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;

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
    return new HashSet<>(
        Arrays.asList(
            CobbleTableOptions.BUCKET,
            CobbleSinkOptions.SINK_PARALLELISM,
            CobbleSinkOptions.SNAPSHOT_RETENTION,
            CobbleSinkOptions.SINK_USE_MANAGED_MEMORY_ALLOCATOR,
            CobbleSinkOptions.SINK_WRITER_BUFFER_MEMORY));
  }

  @Override
  public DynamicTableSink createDynamicTableSink(Context context) {
    ShimLoader.current();
    FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
    helper.validateExcept(CobbleTableOptions.STORAGE_OPTION_PREFIX);
    ReadableConfig options = helper.getOptions();
    TablePaths.normalize(options.get(CobbleTableOptions.PATH));
    requirePositive(options, CobbleTableOptions.BUCKET);
    requirePositive(options, CobbleSinkOptions.SINK_PARALLELISM);
    requirePositiveOrDefault(options, CobbleSinkOptions.SNAPSHOT_RETENTION);
    MemorySize buffer = options.get(CobbleSinkOptions.SINK_WRITER_BUFFER_MEMORY);
    if (buffer.getBytes() <= 0) {
      throw new ValidationException(
          "Option '" + CobbleSinkOptions.SINK_WRITER_BUFFER_MEMORY.key() + "' must be > 0.");
    }
    validateSinkSchema(context.getCatalogTable().getResolvedSchema());
    throw new ValidationException(
        "The Cobble table sink is not available in Cobble " + CobbleVersion.get() + ".");
  }

  @Override
  public DynamicTableSource createDynamicTableSource(Context context) {
    ShimLoader.current();
    FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
    helper.validateExcept(CobbleTableOptions.STORAGE_OPTION_PREFIX);
    TablePaths.normalize(helper.getOptions().get(CobbleTableOptions.PATH));
    throw new ValidationException(
        "The Cobble table source is not available in Cobble " + CobbleVersion.get() + ".");
  }

  private static void requirePositive(ReadableConfig options, ConfigOption<Integer> option) {
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
  }

  private static void requirePositiveOrDefault(
      ReadableConfig options, ConfigOption<Integer> option) {
    int value = options.get(option);
    if (value <= 0) {
      throw new ValidationException(
          "Option '" + option.key() + "' must be > 0, but is " + value + ".");
    }
  }

  private static void validateSinkSchema(ResolvedSchema schema) {
    UniqueConstraint primaryKey =
        schema
            .getPrimaryKey()
            .orElseThrow(
                () ->
                    new ValidationException(
                        "A Cobble sink table needs a PRIMARY KEY (... ) NOT ENFORCED."));
    List<String> keyColumns = primaryKey.getColumns();
    List<String> valueColumns =
        schema.getColumns().stream()
            .filter(Column::isPhysical)
            .map(Column::getName)
            .filter(name -> !keyColumns.contains(name))
            .collect(Collectors.toList());
    if (valueColumns.isEmpty()) {
      throw new ValidationException(
          "A Cobble sink table needs at least one physical column outside the PRIMARY KEY "
              + keyColumns
              + ".");
    }
  }
}
