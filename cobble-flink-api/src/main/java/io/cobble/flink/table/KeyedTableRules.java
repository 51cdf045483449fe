package io.cobble.flink.table;

import io.cobble.flink.table.codec.RowCodec;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;

/**
 * The DDL rules of a sink table, whether it is written or read back: a primary key, at least one
 * value column, and only physical columns of types Cobble can store.
 */
final class KeyedTableRules {

  private KeyedTableRules() {}

  static void check(ResolvedSchema schema, String role) {
    UniqueConstraint primaryKey =
        schema
            .getPrimaryKey()
            .orElseThrow(
                () ->
                    new ValidationException(
                        "A Cobble "
                            + role
                            + " table needs a PRIMARY KEY (...) NOT ENFORCED; declare the key"
                            + " columns rows are upserted by."));
    List<String> keyColumns = primaryKey.getColumns();
    List<String> valueColumns =
        schema.getColumns().stream()
            .filter(Column::isPhysical)
            .map(Column::getName)
            .filter(name -> !keyColumns.contains(name))
            .collect(Collectors.toList());
    if (valueColumns.isEmpty()) {
      throw new ValidationException(
          "A Cobble "
              + role
              + " table needs at least one physical column outside the PRIMARY KEY "
              + keyColumns
              + "; add a value column.");
    }
    for (Column column : schema.getColumns()) {
      if (!column.isPhysical()) {
        throw new ValidationException(
            "Column '"
                + column.getName()
                + "' is computed or metadata; a Cobble "
                + role
                + " table stores physical columns only.");
      }
      if (!RowCodec.supports(column.getDataType().getLogicalType())) {
        throw new ValidationException(
            "Column '"
                + column.getName()
                + "' has type "
                + column.getDataType().getLogicalType()
                + ", which a Cobble table cannot store. Supported: BOOLEAN, TINYINT, SMALLINT,"
                + " INT, BIGINT, FLOAT, DOUBLE, CHAR/VARCHAR/STRING, BINARY/VARBINARY/BYTES,"
                + " DECIMAL, DATE, TIME, TIMESTAMP and TIMESTAMP_LTZ.");
      }
    }
  }
}
