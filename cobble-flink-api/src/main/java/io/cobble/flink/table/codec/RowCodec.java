package io.cobble.flink.table.codec;

import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/**
 * A sink table's rows as Cobble rows: the key from {@link KeyEncoder}, and one Cobble column per
 * non-key column in table order. A column value is a tag byte, 0 for SQL NULL (nothing follows) or
 * 1, then the field's {@link FieldCodec} bytes. NULL is stored rather than deleted so that a row
 * whose value columns are all NULL still exists.
 */
public final class RowCodec implements Serializable {

  private static final long serialVersionUID = 1L;

  private static final byte NULL = 0;
  private static final byte PRESENT = 1;

  private final RowType rowType;
  private final int[] keyPositions;
  private final int[] valuePositions;
  private final KeyEncoder keys;
  private transient FieldCodec[] valueCodecs;
  private transient RowData.FieldGetter[] valueGetters;

  /**
   * @param keyPositions the primary-key columns' positions in {@code rowType}, in key order
   */
  public RowCodec(RowType rowType, int[] keyPositions) {
    this.rowType = rowType;
    this.keyPositions = keyPositions.clone();
    List<LogicalType> keyTypes = new ArrayList<>();
    for (int position : keyPositions) {
      keyTypes.add(rowType.getTypeAt(position));
    }
    this.keys = new KeyEncoder(keyTypes, keyPositions);
    List<Integer> values = new ArrayList<>();
    for (int i = 0; i < rowType.getFieldCount(); i++) {
      if (!contains(keyPositions, i)) {
        values.add(i);
      }
    }
    this.valuePositions = values.stream().mapToInt(Integer::intValue).toArray();
    init();
  }

  /** Whether values of this logical type can be stored. */
  public static boolean supports(LogicalType type) {
    return FieldCodec.forType(type).isPresent();
  }

  static FieldCodec codecOf(LogicalType type) {
    return FieldCodec.forType(type)
        .orElseThrow(() -> new IllegalArgumentException("no Cobble encoding for " + type));
  }

  private void init() {
    valueCodecs = new FieldCodec[valuePositions.length];
    valueGetters = new RowData.FieldGetter[valuePositions.length];
    for (int i = 0; i < valuePositions.length; i++) {
      LogicalType type = rowType.getTypeAt(valuePositions[i]);
      valueCodecs[i] = codecOf(type);
      valueGetters[i] = RowData.createFieldGetter(type, valuePositions[i]);
    }
  }

  /** The number of Cobble columns a row has: one per non-key column. */
  public int valueColumnCount() {
    return valuePositions.length;
  }

  public byte[] key(RowData row) {
    return keys.encode(row);
  }

  /** The row's Cobble column values, in table order of the non-key columns. */
  public byte[][] values(RowData row) {
    if (valueCodecs == null) {
      init();
    }
    byte[][] columns = new byte[valuePositions.length][];
    for (int i = 0; i < columns.length; i++) {
      Object value = valueGetters[i].getFieldOrNull(row);
      if (value == null) {
        columns[i] = new byte[] {NULL};
      } else {
        byte[] field = valueCodecs[i].encode(value);
        byte[] column = new byte[field.length + 1];
        column[0] = PRESENT;
        System.arraycopy(field, 0, column, 1, field.length);
        columns[i] = column;
      }
    }
    return columns;
  }

  /** The table row of a Cobble key and its column values (as {@link #values} wrote them). */
  public RowData decode(byte[] key, byte[][] columns) {
    if (valueCodecs == null) {
      init();
    }
    if (columns.length != valuePositions.length) {
      throw new IllegalArgumentException(
          "expected " + valuePositions.length + " columns, got " + columns.length);
    }
    GenericRowData row = new GenericRowData(rowType.getFieldCount());
    Object[] keyValues = keys.decode(key);
    for (int i = 0; i < keyPositions.length; i++) {
      row.setField(keyPositions[i], keyValues[i]);
    }
    for (int i = 0; i < columns.length; i++) {
      byte[] column = columns[i];
      if (column == null || column.length == 0 || column[0] == NULL) {
        continue;
      }
      ByteBuffer in = ByteBuffer.wrap(column, 1, column.length - 1);
      row.setField(valuePositions[i], valueCodecs[i].decode(in, column.length - 1));
    }
    return row;
  }

  private static boolean contains(int[] values, int value) {
    for (int v : values) {
      if (v == value) {
        return true;
      }
    }
    return false;
  }
}
