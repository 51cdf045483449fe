package io.cobble.flink.table;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.VarBinaryType;

/**
 * The rules of {@code source.kind = 'raw'}: the DDL is exactly {@code key BYTES, columns
 * ARRAY<BYTES>} without a primary key, and {@code raw.columns} lists the Cobble column indexes that
 * fill {@code columns}.
 */
final class RawTableRules {

  private static final String RAW_DDL = "`key` BYTES, `columns` ARRAY<BYTES>";

  private RawTableRules() {}

  static void checkSchema(ResolvedSchema schema) {
    if (schema.getPrimaryKey().isPresent()) {
      throw new ValidationException(
          "A raw Cobble source (source.kind = 'raw') must not declare a PRIMARY KEY: raw rows are"
              + " bytes and support neither upserts nor lookups. Remove the PRIMARY KEY.");
    }
    List<Column> columns = schema.getColumns();
    boolean exact =
        columns.size() == 2
            && columns.get(0).isPhysical()
            && columns.get(1).isPhysical()
            && columns.get(0).getName().equals("key")
            && columns.get(1).getName().equals("columns")
            && isBytes(columns.get(0).getDataType().getLogicalType())
            && columns.get(1).getDataType().getLogicalType().getTypeRoot() == LogicalTypeRoot.ARRAY
            && isBytes(
                ((ArrayType) columns.get(1).getDataType().getLogicalType()).getElementType());
    if (!exact) {
      throw new ValidationException(
          "A raw Cobble source (source.kind = 'raw') has exactly the columns "
              + RAW_DDL
              + ", but the DDL declares "
              + describe(columns)
              + ".");
    }
  }

  /** The column indexes of {@code raw.columns}, in the order given. */
  static int[] columns(ReadableConfig options) {
    String key = CobbleSourceOptions.RAW_COLUMNS.key();
    String value =
        options
            .getOptional(CobbleSourceOptions.RAW_COLUMNS)
            .orElseThrow(
                () ->
                    new ValidationException(
                        "Option '"
                            + key
                            + "' is required for source.kind = 'raw': list the Cobble column"
                            + " indexes to read, e.g. '0,1'."));
    if (value.trim().toLowerCase(Locale.ROOT).equals("all")) {
      throw new ValidationException(
          "Option '"
              + key
              + "' = 'all' is not supported yet; list the column indexes instead, e.g. '0,1'.");
    }
    Set<Integer> indexes = new LinkedHashSet<>();
    for (String part : value.split(",", -1)) {
      int index;
      try {
        index = Integer.parseInt(part.trim());
      } catch (NumberFormatException e) {
        throw new ValidationException(
            "Option '"
                + key
                + "' must be comma-separated column indexes (e.g. '0,1'), but contains '"
                + part.trim()
                + "'.");
      }
      if (index < 0) {
        throw new ValidationException(
            "Option '" + key + "' lists column " + index + "; column indexes start at 0.");
      }
      if (!indexes.add(index)) {
        throw new ValidationException(
            "Option '" + key + "' lists column " + index + " twice; list each column once.");
      }
    }
    return new ArrayList<>(indexes).stream().mapToInt(Integer::intValue).toArray();
  }

  private static boolean isBytes(LogicalType type) {
    return type.getTypeRoot() == LogicalTypeRoot.VARBINARY
        && ((VarBinaryType) type).getLength() == VarBinaryType.MAX_LENGTH;
  }

  private static String describe(List<Column> columns) {
    List<String> parts = new ArrayList<>();
    for (Column column : columns) {
      parts.add("`" + column.getName() + "` " + column.getDataType().getLogicalType());
    }
    return String.join(", ", parts);
  }
}
