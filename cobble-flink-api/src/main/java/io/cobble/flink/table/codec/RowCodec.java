package io.cobble.flink.table.codec;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
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
  private final ColumnSlots slots;
  private final KeyEncoder keys;
  private transient FieldCodec[] valueCodecs;
  // Per Cobble column, the value column it holds, or -1 for an unused one.
  private transient int[] slotValues;

  /**
   * @param keyPositions the primary-key columns' positions in {@code rowType}, in key order
   */
  public RowCodec(RowType rowType, int[] keyPositions) {
    this(rowType, keyPositions, null);
  }

  /**
   * @param keyPositions the primary-key columns' positions in {@code rowType}, in key order
   * @param slots the Cobble column of each value column; null for value column {@code i} in Cobble
   *     column {@code i}
   */
  public RowCodec(RowType rowType, int[] keyPositions, ColumnSlots slots) {
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
    this.slots = slots == null ? ColumnSlots.identity(valuePositions.length) : slots;
    if (this.slots.valueColumns() != valuePositions.length) {
      throw new IllegalArgumentException(
          "Cobble columns " + this.slots + " for " + valuePositions.length + " value columns");
    }
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
    slotValues = new int[slots.count()];
    Arrays.fill(slotValues, -1);
    for (int i = 0; i < valuePositions.length; i++) {
      valueCodecs[i] = codecOf(rowType.getTypeAt(valuePositions[i]));
      slotValues[slots.slot(i)] = i;
    }
  }

  /**
   * Rebuilds the transient codecs once, as the object is deserialized, before any thread can use
   * it: a lazy rebuild on first use raced between async lookup threads (one saw the array before
   * its codecs were set).
   */
  private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
    in.defaultReadObject();
    init();
  }

  /**
   * The number of Cobble columns a row has: one per non-key column, plus the unused columns of
   * dropped ones.
   */
  public int valueColumnCount() {
    return slots.count();
  }

  public byte[] key(RowData row) {
    return keys.encode(row);
  }

  /** Replaces the buffer's content with the row's key, as {@link #key} returns it. */
  public void keyInto(RowData row, EncodeBuffer out) {
    keys.encodeInto(row, out);
  }

  /** The row's Cobble column values, by Cobble column (see {@link ColumnSlots}). */
  public byte[][] values(RowData row) {
    EncodeBuffer out = new EncodeBuffer(64);
    int[] ends = new int[slots.count()];
    valuesInto(row, out, ends);
    byte[][] columns = new byte[ends.length][];
    int start = 0;
    for (int i = 0; i < ends.length; i++) {
      columns[i] = Arrays.copyOfRange(out.array(), start, ends[i]);
      start = ends[i];
    }
    return columns;
  }

  /**
   * Replaces the buffer's content with the row's column values (as {@link #values} returns them)
   * one after the other; {@code columnEnds[i]} receives where column {@code i} ends.
   */
  public void valuesInto(RowData row, EncodeBuffer out, int[] columnEnds) {
    out.clear();
    for (int slot = 0; slot < slotValues.length; slot++) {
      int i = slotValues[slot];
      int position = i < 0 ? -1 : valuePositions[i];
      if (i < 0 || row.isNullAt(position)) {
        out.putByte(NULL);
      } else {
        out.putByte(PRESENT);
        valueCodecs[i].write(row, position, out);
      }
      columnEnds[slot] = out.size();
    }
  }

  /**
   * The table row of a Cobble key and its column values (as {@link #values} wrote them). Rows
   * written before columns were appended have fewer Cobble columns: the new columns read as NULL.
   * Values written before a column was widened read in the wider type.
   *
   * @throws IllegalArgumentException naming the column when a value cannot be a value of its type
   *     (the rows were written with an incompatible type)
   */
  public RowData decode(byte[] key, byte[][] columns) {
    if (columns.length > slotValues.length) {
      throw new IllegalArgumentException(
          "expected at most " + slotValues.length + " columns, got " + columns.length);
    }
    GenericRowData row = new GenericRowData(rowType.getFieldCount());
    keys.decodeInto(key, row, keyPositions);
    for (int i = 0; i < valuePositions.length; i++) {
      int slot = slots.slot(i);
      byte[] column = slot < columns.length ? columns[slot] : null;
      if (column == null || column.length == 0 || column[0] == NULL) {
        continue;
      }
      try {
        row.setField(valuePositions[i], valueCodecs[i].decode(column, 1, column.length - 1));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "Column '"
                + rowType.getFieldNames().get(valuePositions[i])
                + "' ("
                + rowType.getTypeAt(valuePositions[i]).asSummaryString()
                + ") cannot read a stored value: "
                + e.getMessage()
                + ". The rows were written with a type this column cannot be widened from.",
            e);
      }
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
