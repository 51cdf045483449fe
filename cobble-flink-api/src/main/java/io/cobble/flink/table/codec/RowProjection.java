package io.cobble.flink.table.codec;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/**
 * What a source reads of a sink table's rows and how it builds its SQL rows from them: the fields a
 * query needs (a projection of the source DDL, which may name the table's columns in any order and
 * leave value columns out), the Cobble columns that hold them ({@link #cobbleColumns()}, the only
 * ones the engine reads and decodes), and the decoding of the key and those columns into a row of
 * just the projected fields. Values are read as {@link RowCodec} wrote them.
 *
 * <p>Cobble column 0 is always read, even when the query needs no value column or only later ones:
 * every row ever written has it (a row written before columns were appended lacks the new ones), so
 * no row disappears because the columns asked for are absent from it.
 */
public final class RowProjection implements Serializable {

  private static final long serialVersionUID = 1L;

  private static final byte NULL = 0;

  private final RowType producedType;
  // Per produced field: the key part it is (stored key order), or -1 for a value field.
  private final int[] keyPart;
  // Per produced field: its index in cobbleColumns, or -1 for a key field.
  private final int[] columnIndex;
  private final int[] cobbleColumns;
  private final ArrayList<LogicalType> keyTypes;
  private final KeyEncoder keys;
  private transient FieldCodec[] codecs;
  // Per key part (stored key order): its produced position, or -1; null when no key is produced.
  private transient int[] keyTargets;
  // Whether every produced key field decodes to a value equal to the probe value that encoded it.
  private transient boolean probeKeysExact;

  private RowProjection(
      RowType producedType,
      int[] keyPart,
      int[] columnIndex,
      int[] cobbleColumns,
      List<LogicalType> keyTypes) {
    this.producedType = producedType;
    this.keyPart = keyPart;
    this.columnIndex = columnIndex;
    this.cobbleColumns = cobbleColumns;
    this.keyTypes = new ArrayList<>(keyTypes);
    this.keys = new KeyEncoder(keyTypes, new int[keyTypes.size()]);
    init();
  }

  /**
   * @param ddl the source DDL's physical row type
   * @param keyPositions the primary-key columns' positions in {@code ddl}, in the table's key order
   * @param slots the Cobble column of each value column of {@code ddl}, in DDL order; null for
   *     value column {@code i} in Cobble column {@code i}
   * @param fields the DDL positions of the produced fields, in produced order
   */
  public static RowProjection of(RowType ddl, int[] keyPositions, ColumnSlots slots, int[] fields) {
    if (slots == null) {
      slots = ColumnSlots.identity(ddl.getFieldCount() - keyPositions.length);
    }
    int[] slotOfField = new int[ddl.getFieldCount()];
    Arrays.fill(slotOfField, -1);
    int value = 0;
    for (int i = 0; i < ddl.getFieldCount(); i++) {
      if (indexOf(keyPositions, i) < 0) {
        slotOfField[i] = slots.slot(value++);
      }
    }
    TreeSet<Integer> read = new TreeSet<>();
    read.add(0);
    for (int field : fields) {
      if (slotOfField[field] >= 0) {
        read.add(slotOfField[field]);
      }
    }
    int[] cobbleColumns = read.stream().mapToInt(Integer::intValue).toArray();
    List<RowType.RowField> produced = new ArrayList<>();
    int[] keyPart = new int[fields.length];
    int[] columnIndex = new int[fields.length];
    for (int j = 0; j < fields.length; j++) {
      produced.add(ddl.getFields().get(fields[j]));
      keyPart[j] = indexOf(keyPositions, fields[j]);
      columnIndex[j] =
          slotOfField[fields[j]] < 0
              ? -1
              : Arrays.binarySearch(cobbleColumns, slotOfField[fields[j]]);
    }
    List<LogicalType> keyTypes = new ArrayList<>();
    for (int position : keyPositions) {
      keyTypes.add(ddl.getTypeAt(position));
    }
    return new RowProjection(
        new RowType(ddl.isNullable(), produced), keyPart, columnIndex, cobbleColumns, keyTypes);
  }

  private void init() {
    codecs = new FieldCodec[keyPart.length];
    boolean producesKey = false;
    for (int j = 0; j < keyPart.length; j++) {
      if (keyPart[j] < 0) {
        codecs[j] = RowCodec.codecOf(producedType.getTypeAt(j));
      } else {
        producesKey = true;
      }
    }
    keyTargets = producesKey ? keyFieldPositions() : null;
    probeKeysExact = true;
    for (LogicalType type : keyTypes) {
      probeKeysExact &= decodesToProbeValue(type);
    }
  }

  /**
   * Whether a key field of this type decodes to exactly the value it was encoded from, so a lookup
   * may produce the probe's own value instead of decoding the stored key: true for the integer,
   * boolean, date, time and character types, which encode every bit of their value and are
   * immutable. Not for floating point (one encoding for several NaNs), timestamps and decimals
   * (encoded at the column's precision) or binary strings (mutable arrays).
   */
  private static boolean decodesToProbeValue(LogicalType type) {
    switch (type.getTypeRoot()) {
      case BOOLEAN:
      case TINYINT:
      case SMALLINT:
      case INTEGER:
      case BIGINT:
      case DATE:
      case TIME_WITHOUT_TIME_ZONE:
      case CHAR:
      case VARCHAR:
        return true;
      default:
        return false;
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

  /** The Cobble columns to read, ascending; the columns {@link #decode} expects, in this order. */
  public int[] cobbleColumns() {
    return cobbleColumns.clone();
  }

  /** The row type of the rows {@link #decode} returns. */
  public RowType producedType() {
    return producedType;
  }

  /** The position of each primary-key part (table key order) in the produced row, -1 if absent. */
  public int[] keyFieldPositions() {
    int[] positions = new int[keyTypes.size()];
    Arrays.fill(positions, -1);
    for (int j = 0; j < keyPart.length; j++) {
      if (keyPart[j] >= 0) {
        positions[keyPart[j]] = j;
      }
    }
    return positions;
  }

  /** The primary-key part types, in the table's key order. */
  public List<LogicalType> keyTypes() {
    return new ArrayList<>(keyTypes);
  }

  /**
   * The produced row of a Cobble key and the values of {@link #cobbleColumns()} (null or empty
   * where a row has no value), decoded straight into the row: the row's strings and binary values
   * may share the arrays of {@code columns}, which the caller hands over (a read's own values); it
   * keeps no reference to {@code key}.
   *
   * @throws IllegalArgumentException naming the column when a value cannot be a value of its type
   */
  public RowData decode(byte[] key, byte[][] columns) {
    GenericRowData row = new GenericRowData(keyPart.length);
    if (keyTargets != null) {
      keys.decodeInto(key, row, keyTargets);
    }
    decodeValues(row, columns);
    return row;
  }

  /**
   * A decoder of rows handed over column by column in place ({@link ProjectedRowDecoder}), for one
   * thread at a time.
   */
  public ProjectedRowDecoder newRowDecoder() {
    return new ProjectedRowDecoder(this);
  }

  /**
   * Sets the produced key fields of the row a lookup found with {@code probe}'s key values: where
   * the key's types allow ({@link #decodesToProbeValue}), the probe's own values (equal to what
   * decoding {@code key} gives, without decoding or boxing them again), otherwise decoded from
   * {@code key}.
   *
   * @param probePositions the position in {@code probe} of each key part, in the table's key order
   * @param key {@code probe}'s encoded key
   */
  void fillKey(GenericRowData row, RowData probe, int[] probePositions, byte[] key) {
    if (keyTargets == null) {
      return;
    }
    if (!probeKeysExact || !(probe instanceof GenericRowData)) {
      keys.decodeInto(key, row, keyTargets);
      return;
    }
    GenericRowData probed = (GenericRowData) probe;
    for (int part = 0; part < keyTargets.length; part++) {
      if (keyTargets[part] >= 0) {
        row.setField(keyTargets[part], probed.getField(probePositions[part]));
      }
    }
  }

  /** The number of fields of a produced row. */
  int arity() {
    return keyPart.length;
  }

  /**
   * Sets the produced fields stored in Cobble column {@code cobbleColumns()[index]} from its value
   * at {@code buf[off, off + len)} (a null marker leaves them null), copying what it keeps.
   */
  void decodeColumn(GenericRowData row, int index, byte[] buf, int off, int len) {
    if (len == 0 || buf[off] == NULL) {
      return;
    }
    for (int j = 0; j < columnIndex.length; j++) {
      if (columnIndex[j] == index) {
        try {
          row.setField(j, codecs[j].decode(buf, off + 1, len - 1));
        } catch (IllegalArgumentException e) {
          throw unreadable(j, e);
        }
      }
    }
  }

  private IllegalArgumentException unreadable(int j, IllegalArgumentException e) {
    return new IllegalArgumentException(
        "Column '"
            + producedType.getFieldNames().get(j)
            + "' ("
            + producedType.getTypeAt(j).asSummaryString()
            + ") cannot read a stored value: "
            + e.getMessage()
            + ". The rows were written with a type this column cannot be widened from.",
        e);
  }

  private void decodeValues(GenericRowData row, byte[][] columns) {
    for (int j = 0; j < keyPart.length; j++) {
      int index = columnIndex[j];
      if (index < 0) {
        continue;
      }
      byte[] column = index < columns.length ? columns[index] : null;
      if (column == null || column.length == 0 || column[0] == NULL) {
        continue;
      }
      try {
        row.setField(j, codecs[j].wrap(column, 1, column.length - 1));
      } catch (IllegalArgumentException e) {
        throw unreadable(j, e);
      }
    }
  }

  private static int indexOf(int[] values, int value) {
    for (int i = 0; i < values.length; i++) {
      if (values[i] == value) {
        return i;
      }
    }
    return -1;
  }
}
