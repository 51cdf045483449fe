package io.cobble.flink.catalog;

import java.util.Optional;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.table.types.logical.utils.LogicalTypeChecks;

/** The column types a catalog table may have, and the type changes ALTER TABLE may make. */
final class CatalogTypes {

  static final String SUPPORTED =
      "BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, STRING (unbounded VARCHAR), BYTES"
          + " (unbounded VARBINARY), DECIMAL, DATE, TIME and TIMESTAMP";

  private CatalogTypes() {}

  /** Why a column of this type cannot be stored, or empty when it can. */
  static Optional<String> unsupported(String column, LogicalType type) {
    switch (type.getTypeRoot()) {
      case BOOLEAN:
      case TINYINT:
      case SMALLINT:
      case INTEGER:
      case BIGINT:
      case FLOAT:
      case DOUBLE:
      case DECIMAL:
      case DATE:
      case TIME_WITHOUT_TIME_ZONE:
      case TIMESTAMP_WITHOUT_TIME_ZONE:
        return Optional.empty();
      case VARCHAR:
        if (((VarCharType) type).getLength() == VarCharType.MAX_LENGTH) {
          return Optional.empty();
        }
        return Optional.of(bounded(column, type, "STRING"));
      case VARBINARY:
        if (((VarBinaryType) type).getLength() == VarBinaryType.MAX_LENGTH) {
          return Optional.empty();
        }
        return Optional.of(bounded(column, type, "BYTES"));
      case CHAR:
        return Optional.of(bounded(column, type, "STRING"));
      case BINARY:
        return Optional.of(bounded(column, type, "BYTES"));
      default:
        return Optional.of(
            "Column '"
                + column
                + "' has type "
                + type.asSummaryString()
                + ", which the Cobble catalog does not support. Supported types: "
                + SUPPORTED
                + ".");
    }
  }

  private static String bounded(String column, LogicalType type, String unbounded) {
    return "Column '"
        + column
        + "' has the bounded type "
        + type.asSummaryString()
        + ": the Cobble catalog cannot preserve the length bound of a CHAR, VARCHAR, BINARY or"
        + " VARBINARY column. Use "
        + unbounded
        + ".";
  }

  /**
   * Why {@code from} cannot be changed to {@code to} in place, or empty when it can: integers widen
   * (TINYINT, SMALLINT, INT, BIGINT), FLOAT widens to DOUBLE, DECIMAL precision rises at the same
   * scale, TIME and TIMESTAMP precision rises; a column may become nullable, never NOT NULL.
   */
  static Optional<String> widening(String column, LogicalType from, LogicalType to) {
    String change =
        "Cannot change column '"
            + column
            + "' from "
            + from.asSummaryString()
            + " to "
            + to.asSummaryString()
            + ": ";
    if (from.isNullable() && !to.isNullable()) {
      return Optional.of(change + "a column cannot become NOT NULL.");
    }
    LogicalType a = from.copy(true);
    LogicalType b = to.copy(true);
    if (a.equals(b)) {
      return Optional.empty();
    }
    int fromRank = integerRank(a.getTypeRoot());
    int toRank = integerRank(b.getTypeRoot());
    if (fromRank > 0 && toRank > 0) {
      return toRank >= fromRank
          ? Optional.empty()
          : Optional.of(change + "narrowing an integer type is not supported.");
    }
    LogicalTypeRoot root = a.getTypeRoot();
    if (root == LogicalTypeRoot.FLOAT && b.getTypeRoot() == LogicalTypeRoot.DOUBLE) {
      return Optional.empty();
    }
    if (root == b.getTypeRoot()) {
      switch (root) {
        case DECIMAL:
          DecimalType da = (DecimalType) a;
          DecimalType db = (DecimalType) b;
          if (da.getScale() != db.getScale()) {
            return Optional.of(change + "a DECIMAL column keeps its scale.");
          }
          return db.getPrecision() >= da.getPrecision()
              ? Optional.empty()
              : Optional.of(change + "lowering DECIMAL precision is not supported.");
        case TIME_WITHOUT_TIME_ZONE:
        case TIMESTAMP_WITHOUT_TIME_ZONE:
          return LogicalTypeChecks.getPrecision(b) >= LogicalTypeChecks.getPrecision(a)
              ? Optional.empty()
              : Optional.of(change + "lowering precision is not supported.");
        default:
          break;
      }
    }
    return Optional.of(
        change
            + "the Cobble catalog only widens a column within its type family (TINYINT to"
            + " SMALLINT to INT to BIGINT, FLOAT to DOUBLE) or raises DECIMAL (same scale), TIME or"
            + " TIMESTAMP precision.");
  }

  private static int integerRank(LogicalTypeRoot root) {
    switch (root) {
      case TINYINT:
        return 1;
      case SMALLINT:
        return 2;
      case INTEGER:
        return 3;
      case BIGINT:
        return 4;
      default:
        return 0;
    }
  }
}
