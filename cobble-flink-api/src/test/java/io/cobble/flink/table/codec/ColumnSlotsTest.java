package io.cobble.flink.table.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.SmallIntType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

/**
 * Rows written before a catalog ALTER TABLE, read with the codec after it: value columns in their
 * own Cobble columns, unused columns of dropped ones, fewer columns in older rows, narrower stored
 * numbers; and stored values no widening explains are rejected naming the column.
 */
class ColumnSlotsTest {

  private static RowType row(LogicalType... types) {
    String[] names = new String[types.length];
    for (int i = 0; i < names.length; i++) {
      names[i] = "c" + i;
    }
    return RowType.of(types, names);
  }

  @Test
  void olderRowsReadThroughTheEvolvedSchema() {
    // Before: id, a SMALLINT, b FLOAT, e STRING in Cobble columns 0, 1, 2.
    RowCodec before =
        new RowCodec(
            row(
                new BigIntType(false),
                new SmallIntType(),
                new FloatType(),
                VarCharType.STRING_TYPE),
            new int[] {0});
    byte[][] stored =
        before.values(GenericRowData.of(7L, (short) -3, 1.5f, StringData.fromString("gone")));
    byte[] key = before.key(GenericRowData.of(7L, null, null, null));
    // After: a widened to BIGINT, b to DOUBLE, e dropped (Cobble column 2 unused), f appended (3).
    RowCodec after =
        new RowCodec(
            row(new BigIntType(false), new BigIntType(), new DoubleType(), VarCharType.STRING_TYPE),
            new int[] {0},
            new ColumnSlots(new int[] {0, 1, 3}, 4));
    assertEquals(4, after.valueColumnCount());
    RowData read = after.decode(key, stored);
    assertEquals(7L, read.getLong(0));
    assertEquals(-3L, read.getLong(1));
    assertEquals(1.5d, read.getDouble(2));
    assertTrue(read.isNullAt(3), "the appended column is NULL in older rows");

    byte[][] written =
        after.values(GenericRowData.of(8L, 1L << 40, 0.1d, StringData.fromString("new")));
    assertEquals(4, written.length);
    assertEquals(1, written[2].length, "the dropped column's Cobble column is written as NULL");
    RowData back = after.decode(after.key(GenericRowData.of(8L, null, null, null)), written);
    assertEquals(1L << 40, back.getLong(1));
    assertEquals("new", back.getString(3).toString());
  }

  @Test
  void aStoredValueWiderThanTheColumnIsRejectedNamingTheColumn() {
    RowCodec wide = new RowCodec(row(new BigIntType(false), new BigIntType()), new int[] {0});
    byte[][] stored = wide.values(GenericRowData.of(1L, 5L));
    RowCodec narrow = new RowCodec(row(new BigIntType(false), new IntType()), new int[] {0});
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> narrow.decode(wide.key(GenericRowData.of(1L, null)), stored));
    assertTrue(
        e.getMessage().contains("Column 'c1' (INT) cannot read a stored value: 8-byte value"),
        e.getMessage());
  }

  @Test
  void slotsMustBeDistinctAndInRange() {
    assertThrows(IllegalArgumentException.class, () -> new ColumnSlots(new int[] {0, 0}, 2));
    assertThrows(IllegalArgumentException.class, () -> new ColumnSlots(new int[] {2}, 2));
    assertTrue(ColumnSlots.identity(3).isIdentity());
  }
}
