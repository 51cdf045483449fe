package io.cobble.schema;

import java.util.Arrays;
import java.util.Objects;

/**
 * Declares a column: a name, an optional merge operator name (null = merge not allowed) and an
 * optional default returned for rows that exist but have no value in this column.
 */
public final class ColumnSpec {
  private final String name;
  private final String mergeOperator;
  private final byte[] defaultValue;

  public ColumnSpec(String name, String mergeOperator, byte[] defaultValue) {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("column name must be a non-empty string");
    }
    this.name = name;
    this.mergeOperator = mergeOperator;
    this.defaultValue = defaultValue == null ? null : defaultValue.clone();
  }

  public static ColumnSpec of(String name) {
    return new ColumnSpec(name, null, null);
  }

  public static ColumnSpec merging(String name, String mergeOperator) {
    return new ColumnSpec(name, mergeOperator, null);
  }

  public String name() {
    return name;
  }

  public String mergeOperator() {
    return mergeOperator;
  }

  public byte[] defaultValue() {
    return defaultValue == null ? null : defaultValue.clone();
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ColumnSpec)) {
      return false;
    }
    ColumnSpec c = (ColumnSpec) o;
    return name.equals(c.name)
        && Objects.equals(mergeOperator, c.mergeOperator)
        && Arrays.equals(defaultValue, c.defaultValue);
  }

  @Override
  public int hashCode() {
    return name.hashCode();
  }

  @Override
  public String toString() {
    return name + (mergeOperator == null ? "" : "(" + mergeOperator + ")");
  }
}
