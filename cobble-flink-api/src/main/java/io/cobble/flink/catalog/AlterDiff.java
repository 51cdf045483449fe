package io.cobble.flink.catalog;

import io.cobble.flink.table.layout.TableSchemaFile;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.TableChange;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.catalog.exceptions.CatalogException;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.utils.TypeConversions;

/**
 * The changes between a table and the new table of an {@code alterTable} call that does not list
 * them (Flink passes the list for ALTER TABLE ADD/DROP/MODIFY/RENAME). Columns are matched by name,
 * so a rename reads as a drop and an add: renames need the listed changes.
 */
final class AlterDiff {

  private AlterDiff() {}

  static List<TableChange> changes(String table, TableSchemaFile old, CatalogBaseTable newTable) {
    if (!(newTable instanceof ResolvedCatalogTable)) {
      throw new CatalogException(
          "ALTER TABLE " + table + ": the Cobble catalog stores tables only, not views.");
    }
    ResolvedCatalogTable resolved = (ResolvedCatalogTable) newTable;
    List<TableChange> changes = new ArrayList<>();
    for (Map.Entry<String, String> option : resolved.getOptions().entrySet()) {
      changes.add(TableChange.set(option.getKey(), option.getValue()));
    }
    if (resolved.getComment() != null && !resolved.getComment().isEmpty()) {
      throw new CatalogException(
          "ALTER TABLE " + table + " sets a COMMENT: the Cobble catalog does not store comments.");
    }
    ResolvedSchema schema = resolved.getResolvedSchema();
    if (!schema.getWatermarkSpecs().isEmpty()) {
      changes.add(TableChange.add(schema.getWatermarkSpecs().get(0)));
    }
    List<String> key =
        schema.getPrimaryKey().map(UniqueConstraint::getColumns).orElse(new ArrayList<>());
    if (!key.equals(old.primaryKey())) {
      schema.getPrimaryKey().ifPresent(pk -> changes.add(TableChange.modify(pk)));
      if (!schema.getPrimaryKey().isPresent()) {
        changes.add(TableChange.dropConstraint("PRIMARY KEY"));
      }
    }
    List<String> oldNames = old.columnNames();
    List<LogicalType> oldTypes = old.columnTypes();
    List<String> newNames = schema.getColumnNames();
    for (int i = 0; i < oldNames.size(); i++) {
      if (!newNames.contains(oldNames.get(i))) {
        changes.add(TableChange.dropColumn(oldNames.get(i)));
      }
    }
    String last = null;
    for (Column column : schema.getColumns()) {
      int index = oldNames.indexOf(column.getName());
      if (index < 0) {
        changes.add(
            last == null
                ? TableChange.add(column, TableChange.ColumnPosition.first())
                : TableChange.add(column, TableChange.ColumnPosition.after(last)));
      } else if (!oldTypes.get(index).equals(column.getDataType().getLogicalType())) {
        changes.add(
            TableChange.modifyPhysicalColumnType(
                Column.physical(
                    column.getName(), TypeConversions.fromLogicalToDataType(oldTypes.get(index))),
                column.getDataType()));
      }
      last = column.getName();
    }
    return changes;
  }
}
