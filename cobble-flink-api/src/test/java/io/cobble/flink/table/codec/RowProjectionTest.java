package io.cobble.flink.table.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.Arrays;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.utils.JoinedRowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.util.InstantiationUtil;
import org.junit.jupiter.api.Test;

/**
 * A source's projection decodes, from only the Cobble columns it asks for, the values the sink's
 * {@link RowCodec} wrote, whatever order the source DDL lists the columns in.
 */
class RowProjectionTest {

  /** The sink's table: key (k1, k2), values a, b, c in Cobble columns 0, 1, 2. */
  private static final RowType SINK =
      RowType.of(
          new LogicalType[] {
            new BigIntType(false),
            new VarCharType(VarCharType.MAX_LENGTH),
            new IntType(),
            new VarCharType(false, VarCharType.MAX_LENGTH),
            new BigIntType()
          },
          new String[] {"k1", "a", "b", "k2", "c"});

  private static final int[] SINK_KEY = {0, 3};

  /** A source DDL: c, k2, a, k1 (b left out). */
  private static final RowType SOURCE =
      RowType.of(
          new LogicalType[] {
            new BigIntType(),
            new VarCharType(false, VarCharType.MAX_LENGTH),
            new VarCharType(VarCharType.MAX_LENGTH),
            new BigIntType(false)
          },
          new String[] {"c", "k2", "a", "k1"});

  // Source key positions in the table's key order (k1, k2); value columns c, a in Cobble 2, 0.
  private static final int[] SOURCE_KEY = {3, 1};
  private static final ColumnSlots SOURCE_SLOTS = new ColumnSlots(new int[] {2, 0}, 3);

  private final RowCodec sink = new RowCodec(SINK, SINK_KEY);
  private final RowData written =
      GenericRowData.of(7L, StringData.fromString("alpha"), 42, StringData.fromString("eu"), 9000L);

  /** What the engine returns for a projection: the listed Cobble columns, in that order. */
  /** A lookup hit's row as the decoder builds it from {@code columns} handed over in place. */
  private static RowData decodeProbed(
      RowProjection projection, RowData probe, int[] probePositions, byte[] key, byte[][] columns) {
    ProjectedRowDecoder decoder = projection.newRowDecoder();
    decoder.start();
    for (int i = 0; i < columns.length; i++) {
      if (columns[i] != null) {
        // In place: the value lies inside a larger array, which is overwritten after the call.
        byte[] stored = new byte[columns[i].length + 6];
        System.arraycopy(columns[i], 0, stored, 3, columns[i].length);
        decoder.accept(i, stored, 3, columns[i].length);
        Arrays.fill(stored, (byte) 0x55);
      }
    }
    return decoder.finish(probe, probePositions, key);
  }

  private byte[][] read(RowProjection projection) {
    byte[][] all = sink.values(written);
    int[] columns = projection.cobbleColumns();
    byte[][] out = new byte[columns.length][];
    for (int i = 0; i < columns.length; i++) {
      out[i] = all[columns[i]];
    }
    return out;
  }

  @Test
  void theWholeSourceDdlReadsItsColumnsByNameInItsOwnOrder() {
    RowProjection projection =
        RowProjection.of(SOURCE, SOURCE_KEY, SOURCE_SLOTS, new int[] {0, 1, 2, 3});
    assertArrayEquals(new int[] {0, 2}, projection.cobbleColumns(), "b (column 1) is not read");
    RowData row = projection.decode(sink.key(written), read(projection));
    assertEquals(4, row.getArity());
    assertEquals(9000L, row.getLong(0));
    assertEquals("eu", row.getString(1).toString());
    assertEquals("alpha", row.getString(2).toString());
    assertEquals(7L, row.getLong(3));
    assertEquals(SOURCE, projection.producedType());
    assertArrayEquals(new int[] {3, 1}, projection.keyFieldPositions());
  }

  @Test
  void aProjectionReadsOnlyItsColumnsPlusTheFirst() {
    // The query reads c and k1 only: Cobble column 2, plus column 0 that every row has.
    RowProjection projection = RowProjection.of(SOURCE, SOURCE_KEY, SOURCE_SLOTS, new int[] {3, 0});
    assertArrayEquals(new int[] {0, 2}, projection.cobbleColumns());
    RowData row = projection.decode(sink.key(written), read(projection));
    assertEquals(2, row.getArity());
    assertEquals(7L, row.getLong(0));
    assertEquals(9000L, row.getLong(1));
    assertEquals(Arrays.asList("k1", "c"), projection.producedType().getFieldNames());
    assertArrayEquals(new int[] {0, -1}, projection.keyFieldPositions(), "k2 is not produced");
  }

  @Test
  void aLookupHitTakesExactKeyTypesFromItsProbeAndDecodesTheOthers() {
    RowProjection projection =
        RowProjection.of(SOURCE, SOURCE_KEY, SOURCE_SLOTS, new int[] {0, 1, 2, 3});
    byte[] key = sink.key(written);
    // The probe key row in join order (k2, k1): its own objects become the row's key fields.
    Long k1 = 7L;
    StringData k2 = StringData.fromString("eu");
    RowData row =
        decodeProbed(
            projection, GenericRowData.of(k2, k1), new int[] {1, 0}, key, read(projection));
    assertSame(k1, ((GenericRowData) row).getField(3));
    assertSame(k2, ((GenericRowData) row).getField(1));
    assertEquals(9000L, row.getLong(0));
    assertEquals("alpha", row.getString(2).toString());
    assertEquals(projection.decode(key, read(projection)), row);
    // A probe that is not the planner's GenericRowData: the key fields are decoded.
    RowData joined =
        decodeProbed(
            projection,
            new JoinedRowData(GenericRowData.of(k2), GenericRowData.of(k1)),
            new int[] {1, 0},
            key,
            read(projection));
    assertEquals(row, joined);
    assertNotSame(k2, ((GenericRowData) joined).getField(1));

    // A DECIMAL key encodes at the column's scale: its field is always decoded from the stored key.
    RowType decimalKeyed =
        RowType.of(
            new LogicalType[] {new DecimalType(false, 10, 2), new IntType()},
            new String[] {"d", "v"});
    RowCodec codec = new RowCodec(decimalKeyed, new int[] {0});
    DecimalData stored = DecimalData.fromBigDecimal(new BigDecimal("12.50"), 10, 2);
    RowData decimalRow = GenericRowData.of(stored, 5);
    RowProjection decimal = RowProjection.of(decimalKeyed, new int[] {0}, null, new int[] {0, 1});
    DecimalData probe = DecimalData.fromBigDecimal(new BigDecimal("12.5"), 10, 1);
    RowData hit =
        decodeProbed(
            decimal,
            GenericRowData.of(probe),
            new int[] {0},
            codec.key(decimalRow),
            new byte[][] {codec.values(decimalRow)[0]});
    assertNotSame(probe, ((GenericRowData) hit).getField(0));
    assertEquals(stored, hit.getDecimal(0, 10, 2));
    assertEquals(5, hit.getInt(1));
  }

  @Test
  void keysOnlyReadColumnZeroAndDecodeNoValue() {
    RowProjection projection = RowProjection.of(SOURCE, SOURCE_KEY, SOURCE_SLOTS, new int[] {1});
    assertArrayEquals(new int[] {0}, projection.cobbleColumns());
    RowData row = projection.decode(sink.key(written), read(projection));
    assertEquals(1, row.getArity());
    assertEquals("eu", row.getString(0).toString());
  }

  @Test
  void nullAndAbsentValuesReadAsNull() throws Exception {
    RowProjection projection = RowProjection.of(SOURCE, SOURCE_KEY, SOURCE_SLOTS, new int[] {0, 2});
    RowData withNulls = GenericRowData.of(7L, null, 42, StringData.fromString("eu"), null);
    byte[][] all = sink.values(withNulls);
    RowData row = projection.decode(sink.key(withNulls), new byte[][] {all[0], all[2]});
    assertTrue(row.isNullAt(0));
    assertTrue(row.isNullAt(1));
    // A row written before column 2 existed: the engine returns null for it.
    RowData old =
        projection.decode(sink.key(written), new byte[][] {sink.values(written)[0], null});
    assertTrue(old.isNullAt(0));
    assertEquals("alpha", old.getString(1).toString());
    // Serializable (shipped to the task managers) and usable after the trip.
    RowProjection copy = InstantiationUtil.clone(projection);
    assertEquals("alpha", copy.decode(sink.key(written), read(copy)).getString(1).toString());
    assertNull(copy.decode(sink.key(withNulls), new byte[][] {all[0], all[2]}).getString(0));
  }

  @Test
  void aValueOfAnotherTypeNamesTheColumn() {
    RowProjection projection = RowProjection.of(SOURCE, SOURCE_KEY, SOURCE_SLOTS, new int[] {0});
    // Column 2 holding a 3-byte value cannot be a BIGINT (nor any narrower integer).
    byte[][] columns = {new byte[] {1, 0}, new byte[] {1, 0, 1, 2}};
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> projection.decode(sink.key(written), columns));
    assertTrue(e.getMessage().contains("Column 'c' (BIGINT)"), e.getMessage());
  }

  @Test
  void cutKeysAndValuesFailClearlyInsteadOfReadingPastTheirEnd() {
    RowProjection projection = RowProjection.of(SOURCE, SOURCE_KEY, SOURCE_SLOTS, new int[] {3, 1});
    byte[] key = sink.key(written);
    // The key is k1 (8 bytes) then k2 as a length-prefixed string: cut inside k2.
    byte[] cut = Arrays.copyOf(key, key.length - 1);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> projection.decode(cut, read(projection)));
    assertTrue(e.getMessage().contains("past the key's end"), e.getMessage());
    byte[] longer = Arrays.copyOf(key, key.length + 1);
    e =
        assertThrows(
            IllegalArgumentException.class, () -> projection.decode(longer, read(projection)));
    assertTrue(e.getMessage().contains("left after the key fields"), e.getMessage());
    // b is an INT column (Cobble column 1): a 6-byte value cannot be one.
    RowProjection ints = RowProjection.of(SINK, SINK_KEY, null, new int[] {2});
    byte[][] columns = {new byte[] {1, 0}, new byte[] {1, 0, 0, 0, 0, 0, 7}};
    e = assertThrows(IllegalArgumentException.class, () -> ints.decode(key, columns));
    assertTrue(e.getMessage().contains("Column 'b' (INT)"), e.getMessage());
  }
}
