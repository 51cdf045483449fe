package io.cobble.flink.catalog;

import io.cobble.flink.table.layout.TableSchemaFile;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.CatalogTable;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.utils.TypeConversions;

/**
 * A catalog table as Flink sees it: its columns and primary key, no options (the catalog's table
 * factory supplies path, buckets and storage when a query uses it). Implemented here rather than
 * with {@code CatalogTable.of}, which Flink 2.0 removed, so that one class serves every line.
 */
final class CobbleCatalogTable implements CatalogTable {

  private final Schema schema;
  private final Map<String, String> options;

  private CobbleCatalogTable(Schema schema, Map<String, String> options) {
    this.schema = schema;
    this.options = Collections.unmodifiableMap(new HashMap<>(options));
  }

  static CobbleCatalogTable of(TableSchemaFile stored) {
    Schema.Builder builder = Schema.newBuilder();
    List<String> names = stored.columnNames();
    List<LogicalType> types = stored.columnTypes();
    for (int i = 0; i < names.size(); i++) {
      builder.column(names.get(i), TypeConversions.fromLogicalToDataType(types.get(i)));
    }
    builder.primaryKey(stored.primaryKey());
    return new CobbleCatalogTable(builder.build(), Collections.emptyMap());
  }

  @Override
  public Schema getUnresolvedSchema() {
    return schema;
  }

  @Override
  public Map<String, String> getOptions() {
    return options;
  }

  @Override
  public String getComment() {
    return "";
  }

  @Override
  public boolean isPartitioned() {
    return false;
  }

  @Override
  public List<String> getPartitionKeys() {
    return Collections.emptyList();
  }

  @Override
  public CatalogTable copy(Map<String, String> newOptions) {
    return new CobbleCatalogTable(schema, newOptions);
  }

  @Override
  public CatalogBaseTable copy() {
    return new CobbleCatalogTable(schema, options);
  }

  @Override
  public Optional<String> getDescription() {
    return Optional.of("Cobble catalog table");
  }

  @Override
  public Optional<String> getDetailedDescription() {
    return getDescription();
  }
}
