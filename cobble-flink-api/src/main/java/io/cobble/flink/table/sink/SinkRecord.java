package io.cobble.flink.table.sink;

import org.apache.flink.types.RowKind;

/**
 * A row as the sink's shuffle carries it from the source task to the writer owning its bucket: one
 * byte array holding the row kind, the bucket, the encoded key and, for a row that writes values,
 * where each value column ends and the encoded values. The source task encodes each row once
 * ({@link SinkRecordEncoder}); the partitioner reads the bucket and the writer stores the bytes as
 * they are, so the key is not encoded twice and the row never goes through Flink's row serializer,
 * which turns every non-binary row into a binary one field by field.
 *
 * <p>Layout: kind (1 byte, {@link RowKind#toByteValue}), bucket (int), key length (int), the key;
 * then, for INSERT and UPDATE_AFTER only, one int per value column (where it ends, counted from the
 * first value byte) and the values. Ints are big-endian.
 */
final class SinkRecord {

  static final int KEY_START = 9;

  private SinkRecord() {}

  static RowKind kind(byte[] record) {
    return RowKind.fromByteValue(record[0]);
  }

  static int bucket(byte[] record) {
    return readInt(record, 1);
  }

  static int keyLength(byte[] record) {
    return readInt(record, 5);
  }

  /** Where the column ends start: right after the key. */
  static int columnEndsStart(byte[] record) {
    return KEY_START + keyLength(record);
  }

  static boolean writesValues(RowKind kind) {
    return kind == RowKind.INSERT || kind == RowKind.UPDATE_AFTER;
  }

  static int readInt(byte[] b, int at) {
    return (b[at] & 0xff) << 24
        | (b[at + 1] & 0xff) << 16
        | (b[at + 2] & 0xff) << 8
        | b[at + 3] & 0xff;
  }

  static void writeInt(byte[] b, int at, int v) {
    b[at] = (byte) (v >>> 24);
    b[at + 1] = (byte) (v >>> 16);
    b[at + 2] = (byte) (v >>> 8);
    b[at + 3] = (byte) v;
  }
}
