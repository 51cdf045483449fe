package io.cobble.flink.table.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BinaryType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.CharType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.SmallIntType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.TinyIntType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.InstantiationUtil;
import org.junit.jupiter.api.Test;

class RowCodecTest {

  /** Every type a Cobble table stores, keys first (k1 BIGINT, k2 STRING), then values. */
  private static final LogicalType[] TYPES = {
    new BigIntType(false),
    new VarCharType(false, VarCharType.MAX_LENGTH),
    new BooleanType(),
    new TinyIntType(),
    new SmallIntType(),
    new IntType(),
    new BigIntType(),
    new FloatType(),
    new DoubleType(),
    new VarCharType(VarCharType.MAX_LENGTH),
    new VarBinaryType(VarBinaryType.MAX_LENGTH),
    new DecimalType(10, 2),
    new DecimalType(38, 10),
    new DateType(),
    new TimeType(3),
    new TimestampType(3),
    new TimestampType(9),
    new LocalZonedTimestampType(6),
    new CharType(3),
    new BinaryType(2),
  };

  private static RowType rowType() {
    String[] names = new String[TYPES.length];
    for (int i = 0; i < names.length; i++) {
      names[i] = "f" + i;
    }
    return RowType.of(TYPES, names);
  }

  private static GenericRowData fullRow(long id, String name) {
    return GenericRowData.of(
        id,
        StringData.fromString(name),
        true,
        (byte) -7,
        (short) 31000,
        -123456789,
        Long.MIN_VALUE,
        3.25f,
        -1.0e300,
        StringData.fromString("grüße ✓"),
        new byte[] {0, 1, (byte) 0xff},
        DecimalData.fromBigDecimal(new BigDecimal("-12345678.91"), 10, 2),
        DecimalData.fromBigDecimal(
            new BigDecimal("1234567890123456789012345678.0123456789"), 38, 10),
        19_000,
        86_399_999,
        TimestampData.fromEpochMillis(1_700_000_000_123L),
        TimestampData.fromEpochMillis(-1_000L, 999_999),
        TimestampData.fromEpochMillis(0L, 1000),
        StringData.fromString("abc"),
        new byte[] {9, 8});
  }

  private static GenericRowData nullRow(long id, String name) {
    GenericRowData row = new GenericRowData(TYPES.length);
    row.setField(0, id);
    row.setField(1, StringData.fromString(name));
    return row;
  }

  private final RowCodec codec = new RowCodec(rowType(), new int[] {0, 1});

  @Test
  void everyTypeRoundTrips() {
    GenericRowData row = fullRow(42, "k");
    RowData back = codec.decode(codec.key(row), codec.values(row));
    assertEquals(row, back);
  }

  @Test
  void nullsRoundTripAndStillStoreEveryColumn() {
    GenericRowData row = nullRow(7, "");
    byte[][] values = codec.values(row);
    assertEquals(TYPES.length - 2, values.length);
    for (byte[] value : values) {
      assertArrayEquals(new byte[] {0}, value);
    }
    assertEquals(row, codec.decode(codec.key(row), values));
  }

  @Test
  void emptyStringAndBytesAreNotNull() {
    GenericRowData row = nullRow(1, "x");
    row.setField(9, StringData.fromString(""));
    row.setField(10, new byte[0]);
    RowData back = codec.decode(codec.key(row), codec.values(row));
    assertEquals(StringData.fromString(""), back.getString(9));
    assertArrayEquals(new byte[0], back.getBinary(10));
  }

  @Test
  void rowKindDoesNotChangeTheEncoding() {
    GenericRowData insert = fullRow(3, "a");
    GenericRowData update = fullRow(3, "a");
    update.setRowKind(RowKind.UPDATE_AFTER);
    assertArrayEquals(codec.key(insert), codec.key(update));
    assertTrue(Arrays.deepEquals(codec.values(insert), codec.values(update)));
  }

  @Test
  void keyIsStableAndDocumented() {
    // BIGINT 8 bytes big-endian, then the STRING as varint length + UTF-8.
    byte[] key = codec.key(nullRow(1, "ab"));
    assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 2, 'a', 'b'}, key);
    assertNotEquals(
        Arrays.toString(codec.key(nullRow(1, "ab"))), Arrays.toString(codec.key(nullRow(1, "a"))));
  }

  @Test
  void everySupportedTypeRoundTripsAsAKey() {
    GenericRowData row = fullRow(5, "v");
    for (int i = 0; i < TYPES.length; i++) {
      KeyEncoder keys =
          new KeyEncoder(Collections.singletonList(TYPES[i].copy(false)), new int[] {i});
      Object[] back = keys.decode(keys.encode(row));
      assertEquals(
          GenericRowData.of(row.getField(i)), GenericRowData.of(back), TYPES[i].toString());
    }
  }

  @Test
  void longVariableKeysUseMultiByteLengths() {
    byte[] big = new byte[300];
    Arrays.fill(big, (byte) 'z');
    String text = new String(big, StandardCharsets.US_ASCII);
    GenericRowData row = nullRow(9, text);
    Object[] back =
        new KeyEncoder(Arrays.asList(TYPES[0], TYPES[1]), new int[] {0, 1}).decode(codec.key(row));
    assertEquals(9L, back[0]);
    assertEquals(StringData.fromString(text), back[1]);
  }

  @Test
  void survivesJavaSerialization() throws Exception {
    RowCodec copy = InstantiationUtil.clone(codec);
    GenericRowData row = fullRow(11, "s");
    assertEquals(row, copy.decode(copy.key(row), copy.values(row)));
    assertArrayEquals(codec.key(row), copy.key(row));
  }

  @Test
  void unsupportedTypesAreNamed() {
    assertFalse(RowCodec.supports(new ArrayType(new IntType())));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new RowCodec(
                    RowType.of(new IntType(false), new ArrayType(new IntType())), new int[] {0}));
    assertTrue(e.getMessage().contains("ARRAY<INT>"), e.getMessage());
  }

  /**
   * Binary rows (what the sink receives) encode exactly like generic rows, and the reused buffers
   * of {@link RowCodec#keyInto} and {@link RowCodec#valuesInto} hold what {@link RowCodec#key} and
   * {@link RowCodec#values} return, row after row, whatever the previous row's size.
   */
  @Test
  void binaryRowsIntoReusedBuffersEncodeLikeGenericRows() {
    RowDataSerializer serializer = new RowDataSerializer(rowType());
    EncodeBuffer key = new EncodeBuffer(1);
    EncodeBuffer values = new EncodeBuffer(1);
    int[] ends = new int[codec.valueColumnCount()];
    byte[] longName = new byte[200];
    Arrays.fill(longName, (byte) 'q');
    GenericRowData[] rows = {
      fullRow(1, new String(longName, StandardCharsets.US_ASCII)),
      nullRow(2, "n"),
      fullRow(3, "grüße"),
      nullRow(4, "")
    };
    for (GenericRowData generic : rows) {
      BinaryRowData binary = serializer.toBinaryRow(generic).copy();
      for (RowData row : new RowData[] {generic, binary}) {
        codec.keyInto(row, key);
        assertArrayEquals(codec.key(generic), key.toByteArray());
        codec.valuesInto(row, values, ends);
        byte[][] expected = codec.values(generic);
        int start = 0;
        for (int i = 0; i < expected.length; i++) {
          assertArrayEquals(
              expected[i], Arrays.copyOfRange(values.array(), start, ends[i]), "column " + i);
          start = ends[i];
        }
        assertEquals(start, values.size());
      }
    }
  }

  /**
   * A binary row's strings are read from its segments at the row's offset, wherever the row lies: a
   * row placed mid-segment and one split over two segments (as a network buffer may hold it) encode
   * like the generic row, for out-of-line strings (the key's and two values) and inline ones. Seen
   * failing with the string offset taken from the segment's start instead of the row's.
   */
  @Test
  void binaryRowsAtAnOffsetAndOverSegmentsEncodeLikeGenericRows() {
    RowDataSerializer serializer = new RowDataSerializer(rowType());
    EncodeBuffer key = new EncodeBuffer(1);
    EncodeBuffer values = new EncodeBuffer(1);
    int[] ends = new int[codec.valueColumnCount()];
    for (GenericRowData generic :
        new GenericRowData[] {fullRow(7, "a name longer than seven bytes"), fullRow(8, "short")}) {
      BinaryRowData compact = serializer.toBinaryRow(generic).copy();
      byte[] bytes = new byte[compact.getSizeInBytes()];
      compact.getSegments()[0].get(compact.getOffset(), bytes);
      int size = bytes.length;
      int lead = 13;
      // First segment: padding, the fixed part and some variable bytes; second: the rest.
      int firstPart = size - 20;
      MemorySegment first = MemorySegmentFactory.wrap(new byte[lead + firstPart]);
      first.put(lead, bytes, 0, firstPart);
      MemorySegment second = MemorySegmentFactory.wrap(Arrays.copyOfRange(bytes, firstPart, size));
      BinaryRowData placed = new BinaryRowData(TYPES.length);
      placed.pointTo(new MemorySegment[] {first, second}, lead, size);
      codec.keyInto(placed, key);
      assertArrayEquals(codec.key(generic), key.toByteArray());
      codec.valuesInto(placed, values, ends);
      byte[][] expected = codec.values(generic);
      int start = 0;
      for (int i = 0; i < expected.length; i++) {
        assertArrayEquals(
            expected[i], Arrays.copyOfRange(values.array(), start, ends[i]), "column " + i);
        start = ends[i];
      }
    }
  }

  /** The stored bytes of fixed-width values are pinned: tables written earlier must still read. */
  @Test
  void valueBytesAreStable() {
    byte[][] values = codec.values(fullRow(1, "k"));
    assertArrayEquals(new byte[] {1, 1}, values[0]);
    assertArrayEquals(new byte[] {1, -7}, values[1]);
    assertArrayEquals(new byte[] {1, 0x79, 0x18}, values[2]);
    assertArrayEquals(new byte[] {1, (byte) 0xf8, (byte) 0xa4, 0x32, (byte) 0xeb}, values[3]);
    assertArrayEquals(new byte[] {1, (byte) 0x80, 0, 0, 0, 0, 0, 0, 0}, values[4]);
    assertArrayEquals(new byte[] {1, 0x40, 0x50, 0, 0}, values[5]);
    assertArrayEquals(
        new byte[] {1, (byte) 0xfe, 0x37, (byte) 0xe4, 0x3c, (byte) 0x88, 0x00, 0x75, (byte) 0x9c},
        values[6]);
    assertArrayEquals(
        new byte[] {
          1,
          (byte) 0xff,
          (byte) 0xff,
          (byte) 0xff,
          (byte) 0xff,
          (byte) 0xff,
          (byte) 0xff,
          (byte) 0xfc,
          0x18,
          0,
          0x0f,
          0x42,
          0x3f
        },
        values[14]);
  }
}
