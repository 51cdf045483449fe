package io.cobble.flink.table;

import io.cobble.flink.table.codec.ColumnSlots;
import io.cobble.flink.table.layout.TableSchemaFile;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.types.logical.LogicalType;

/**
 * How a source DDL's columns map onto a published sink table: each DDL column is found in the table
 * by name and must have the table's type; the DDL may list the columns in any order and leave value
 * columns out, but its PRIMARY KEY must be the table's key columns. The result gives the key
 * columns' DDL positions in the table's key order and the Cobble column of each DDL value column.
 */
final class SourceColumns {

  private final int[] keyPositions;
  private final ColumnSlots slots;

  private SourceColumns(int[] keyPositions, ColumnSlots slots) {
    this.keyPositions = keyPositions;
    this.slots = slots;
  }

  /** The DDL positions of the table's primary-key columns, in the table's key order. */
  int[] keyPositions() {
    return keyPositions.clone();
  }

  /** The Cobble column of each DDL value column, in DDL order. */
  ColumnSlots slots() {
    return slots;
  }

  /**
   * @throws ValidationException naming the first DDL column the table does not have or has with
   *     another type, or the primary key that differs
   */
  static SourceColumns match(ResolvedSchema schema, TableSchemaFile table, String root) {
    // First: a key column's type differs in nullability (NOT NULL) whenever the keys differ.
    List<String> ddlKey =
        schema.getPrimaryKey().map(UniqueConstraint::getColumns).orElse(new ArrayList<>());
    if (!new HashSet<>(ddlKey).equals(new HashSet<>(table.primaryKey()))) {
      throw new ValidationException(
          "The DDL does not match the Cobble sink table at '"
              + root
              + "': the PRIMARY KEY is "
              + ddlKey
              + " in the DDL but "
              + table.primaryKey()
              + " in the table. Declare PRIMARY KEY ("
              + String.join(", ", table.primaryKey())
              + ") NOT ENFORCED.");
    }
    List<String> tableNames = table.columnNames();
    List<LogicalType> tableTypes = table.columnTypes();
    List<String> ddlNames = new ArrayList<>();
    for (Column column : schema.getColumns()) {
      if (!column.isPhysical()) {
        continue;
      }
      String name = column.getName();
      int index = tableNames.indexOf(name);
      if (index < 0) {
        throw new ValidationException(
            "The DDL does not match the Cobble sink table at '"
                + root
                + "': column '"
                + name
                + "' is in the DDL but not in the table, whose columns are "
                + tableNames
                + ". Declare only columns the table has (any order, any subset of the value"
                + " columns).");
      }
      LogicalType declared = column.getDataType().getLogicalType();
      LogicalType stored = tableTypes.get(index);
      if (!declared.asSerializableString().equals(stored.asSerializableString())) {
        throw new ValidationException(
            "The DDL does not match the Cobble sink table at '"
                + root
                + "': column '"
                + name
                + "' is "
                + declared.asSummaryString()
                + " in the DDL but "
                + stored.asSummaryString()
                + " in the table. Declare it as "
                + stored.asSummaryString()
                + ".");
      }
      ddlNames.add(name);
    }
    int[] keyPositions = table.primaryKey().stream().mapToInt(ddlNames::indexOf).toArray();
    List<String> tableValues = new ArrayList<>(tableNames);
    tableValues.removeAll(table.primaryKey());
    List<Integer> slots = new ArrayList<>();
    for (String name : ddlNames) {
      if (!table.primaryKey().contains(name)) {
        slots.add(table.slots().slot(tableValues.indexOf(name)));
      }
    }
    return new SourceColumns(
        keyPositions,
        new ColumnSlots(
            slots.stream().mapToInt(Integer::intValue).toArray(), table.slots().count()));
  }
}
