package io.cobble.flink.catalog;

import io.cobble.flink.table.codec.ColumnSlots;
import io.cobble.flink.table.layout.TableSchemaFile;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.CatalogTable;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.catalog.exceptions.CatalogException;

/**
 * What CREATE TABLE may declare in a Cobble catalog: physical columns of the supported types, a
 * primary key, at least one column outside it; no computed or metadata columns, watermarks,
 * partitions, distribution, comments or table options (the catalog supplies the storage).
 */
final class CatalogTableRules {

  private CatalogTableRules() {}

  /** The schema of a new table, with each value column in its own Cobble column. */
  static TableSchemaFile checkCreate(String table, CatalogBaseTable declared, int buckets) {
    if (declared.getTableKind() != CatalogBaseTable.TableKind.TABLE
        || !(declared instanceof ResolvedCatalogTable)) {
      throw new CatalogException(
          "'"
              + table
              + "' is a "
              + declared.getTableKind()
              + ": the Cobble catalog stores tables only; create views in another catalog.");
    }
    ResolvedCatalogTable resolved = (ResolvedCatalogTable) declared;
    if (!resolved.getOptions().isEmpty()) {
      throw new CatalogException(
          "Table '"
              + table
              + "' has table options "
              + resolved.getOptions().keySet()
              + ": tables of the Cobble catalog take no WITH options (the catalog supplies"
              + " path, buckets and storage). Remove the WITH clause; pass job settings such as"
              + " 'sink.parallelism' as /*+ OPTIONS(...) */ hints.");
    }
    if (resolved.getComment() != null && !resolved.getComment().isEmpty()) {
      throw new CatalogException(
          "Table '" + table + "' has a COMMENT: the Cobble catalog does not store comments.");
    }
    if (resolved.isPartitioned()) {
      throw new CatalogException(
          "Table '"
              + table
              + "' is PARTITIONED BY "
              + resolved.getPartitionKeys()
              + ": the Cobble catalog does not support partitions; tables are bucketed by their"
              + " primary key.");
    }
    rejectDistribution(table, resolved.getOrigin());
    ResolvedSchema schema = resolved.getResolvedSchema();
    if (!schema.getWatermarkSpecs().isEmpty()) {
      throw new CatalogException(
          "Table '"
              + table
              + "' declares a WATERMARK: the Cobble catalog does not support watermarks.");
    }
    for (Column column : schema.getColumns()) {
      checkColumn(table, column);
    }
    UniqueConstraint primaryKey =
        schema
            .getPrimaryKey()
            .orElseThrow(
                () ->
                    new CatalogException(
                        "Table '"
                            + table
                            + "' has no PRIMARY KEY: a Cobble catalog table needs a PRIMARY KEY"
                            + " (...) NOT ENFORCED, the columns rows are upserted and looked up"
                            + " by."));
    List<String> names = new ArrayList<>();
    List<String> types = new ArrayList<>();
    int valueColumns = 0;
    for (Column column : schema.getColumns()) {
      names.add(column.getName());
      types.add(column.getDataType().getLogicalType().asSerializableString());
      if (!primaryKey.getColumns().contains(column.getName())) {
        valueColumns++;
      }
    }
    if (valueColumns == 0) {
      throw new CatalogException(
          "Table '"
              + table
              + "' has only PRIMARY KEY columns "
              + primaryKey.getColumns()
              + ": a Cobble catalog table needs at least one column outside the primary key.");
    }
    return new TableSchemaFile(
        names, types, primaryKey.getColumns(), buckets, 0, ColumnSlots.identity(valueColumns));
  }

  /** A column CREATE TABLE or ALTER TABLE ADD may declare. */
  static void checkColumn(String table, Column column) {
    if (!column.isPhysical()) {
      throw new CatalogException(
          "Column '"
              + column.getName()
              + "' of table '"
              + table
              + "' is a "
              + (column instanceof Column.ComputedColumn ? "computed" : "metadata")
              + " column: the Cobble catalog stores physical columns only.");
    }
    if (column.getComment().isPresent()) {
      throw new CatalogException(
          "Column '"
              + column.getName()
              + "' of table '"
              + table
              + "' has a COMMENT: the Cobble catalog does not store comments.");
    }
    CatalogTypes.unsupported(column.getName(), column.getDataType().getLogicalType())
        .ifPresent(
            reason -> {
              throw new CatalogException(reason);
            });
  }

  /**
   * {@code DISTRIBUTED BY} exists from Flink 2.0 on, as {@code CatalogTable#getDistribution}; this
   * code is compiled against 1.17, so it asks reflectively.
   */
  private static void rejectDistribution(String table, CatalogTable origin) {
    Object distribution;
    try {
      Method method = CatalogTable.class.getMethod("getDistribution");
      distribution = method.invoke(origin);
    } catch (NoSuchMethodException olderFlink) {
      return;
    } catch (ReflectiveOperationException e) {
      throw new CatalogException("Cannot read the distribution of table '" + table + "'", e);
    }
    if (distribution instanceof Optional && ((Optional<?>) distribution).isPresent()) {
      throw new CatalogException(
          "Table '"
              + table
              + "' declares DISTRIBUTED BY: the Cobble catalog distributes rows itself, over the"
              + " catalog's 'buckets' by primary key. Remove the DISTRIBUTED BY clause.");
    }
  }
}
