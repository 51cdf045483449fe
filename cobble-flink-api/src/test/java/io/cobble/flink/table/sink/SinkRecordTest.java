package io.cobble.flink.table.sink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.BucketRouter;
import java.util.Arrays;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

/**
 * The shuffle's record carries exactly what the writer would have encoded from the row itself: the
 * key and bucket the lookup side computes, and every value column as the codec writes it.
 */
class SinkRecordTest {

  private static final int BUCKETS = 7;

  private static final RowType ROW_TYPE =
      RowType.of(
          new LogicalType[] {
            new IntType(),
            new BigIntType(false),
            new VarCharType(VarCharType.MAX_LENGTH),
            new DoubleType(),
          },
          new String[] {"score", "id", "name", "amount"});

  /** The key is the second column, so the record's key is not simply a row prefix. */
  private static final RowCodec CODEC = new RowCodec(ROW_TYPE, new int[] {1});

  private static GenericRowData row(RowKind kind, long id, String name, Integer score) {
    GenericRowData row =
        GenericRowData.of(
            score, id, name == null ? null : StringData.fromString(name), (double) id / 3);
    row.setRowKind(kind);
    return row;
  }

  @Test
  void anUpsertCarriesItsKindBucketKeyAndEveryColumn() {
    SinkRecordEncoder encoder = new SinkRecordEncoder(CODEC, BUCKETS);
    for (RowKind kind : new RowKind[] {RowKind.INSERT, RowKind.UPDATE_AFTER}) {
      for (long id = -3; id < 200; id += 7) {
        GenericRowData row = row(kind, id, "name-" + id, id % 3 == 0 ? null : (int) id);
        byte[] record = encoder.map(row);
        assertEquals(kind, SinkRecord.kind(record));
        byte[] key = CODEC.key(row);
        assertArrayEquals(key, keyOf(record));
        assertEquals(BucketRouter.bucketOf(key, BUCKETS), SinkRecord.bucket(record));
        assertEquals(BucketRouter.bucketOf(key, BUCKETS), new BucketKeySelector().getKey(record));
        assertArrayEquals(CODEC.values(row), columnsOf(record), "row " + row);
      }
    }
  }

  @Test
  void aRemovalCarriesOnlyItsKey() {
    SinkRecordEncoder encoder = new SinkRecordEncoder(CODEC, BUCKETS);
    for (RowKind kind : new RowKind[] {RowKind.DELETE, RowKind.UPDATE_BEFORE}) {
      GenericRowData row = row(kind, 42, "a name that a removal does not need", 1);
      byte[] record = encoder.map(row);
      assertEquals(kind, SinkRecord.kind(record));
      assertArrayEquals(CODEC.key(row), keyOf(record));
      assertEquals(SinkRecord.columnEndsStart(record), record.length);
    }
  }

  /** The encoder reuses its buffers: a short row after a long one must not carry the long tail. */
  @Test
  void reusedBuffersLeaveNothingOfTheRowBefore() {
    SinkRecordEncoder reused = new SinkRecordEncoder(CODEC, BUCKETS);
    char[] longName = new char[1000];
    Arrays.fill(longName, 'x');
    reused.map(row(RowKind.INSERT, 1, new String(longName), 5));
    GenericRowData shortRow = row(RowKind.INSERT, 2, "y", null);
    assertArrayEquals(new SinkRecordEncoder(CODEC, BUCKETS).map(shortRow), reused.map(shortRow));
  }

  /** Flink hands the sink binary rows as well as generic ones; both encode to the same record. */
  @Test
  void binaryAndGenericRowsEncodeAlike() {
    SinkRecordEncoder encoder = new SinkRecordEncoder(CODEC, BUCKETS);
    RowDataSerializer serializer = new RowDataSerializer(ROW_TYPE);
    for (long id = 0; id < 50; id++) {
      GenericRowData generic = row(RowKind.UPDATE_AFTER, id, id % 5 == 0 ? null : "n" + id, 3);
      RowData binary = serializer.toBinaryRow(generic);
      assertArrayEquals(encoder.map(generic), encoder.map(binary), "row " + generic);
    }
  }

  private static byte[] keyOf(byte[] record) {
    int start = SinkRecord.KEY_START;
    return Arrays.copyOfRange(record, start, start + SinkRecord.keyLength(record));
  }

  private static byte[][] columnsOf(byte[] record) {
    int count = CODEC.valueColumnCount();
    int endsAt = SinkRecord.columnEndsStart(record);
    int valuesAt = endsAt + 4 * count;
    byte[][] columns = new byte[count][];
    int start = 0;
    for (int i = 0; i < count; i++) {
      int end = SinkRecord.readInt(record, endsAt + 4 * i);
      columns[i] = Arrays.copyOfRange(record, valuesAt + start, valuesAt + end);
      start = end;
    }
    assertEquals(record.length, valuesAt + start, "the values end the record");
    return columns;
  }
}
