package io.cobble.flink.table.codec;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;

/**
 * The binary form of one non-null field, by logical type, on Flink's internal data objects
 * (big-endian throughout):
 *
 * <ul>
 *   <li>BOOLEAN: 1 byte, 0 or 1. TINYINT 1, SMALLINT 2, INT 4, BIGINT 8 bytes, two's complement.
 *   <li>FLOAT, DOUBLE: IEEE 754 bits, 4 and 8 bytes.
 *   <li>DATE: days since epoch; TIME: milliseconds of the day (Flink's internal int), 4 bytes.
 *   <li>TIMESTAMP and TIMESTAMP_LTZ: epoch milliseconds (8 bytes) then nanos of the millisecond
 *       (4).
 *   <li>CHAR, VARCHAR, STRING: UTF-8. BINARY, VARBINARY, BYTES: the bytes. DECIMAL: the unscaled
 *       value as minimal two's complement bytes; precision and scale come from the type.
 * </ul>
 *
 * Fixed-width types have a fixed length; the others are variable-length and their framing belongs
 * to the caller (a column value is one field; a key prefixes them with their length).
 */
abstract class FieldCodec {

  /** The byte length of every value, or -1 for variable-length types. */
  abstract int fixedLength();

  abstract byte[] encode(Object value);

  /** Reads a value of {@code length} bytes at the buffer's position and advances past it. */
  abstract Object decode(ByteBuffer in, int length);

  /** The codec of a logical type, or empty when the type has no Cobble encoding. */
  static Optional<FieldCodec> forType(LogicalType type) {
    switch (type.getTypeRoot()) {
      case BOOLEAN:
        return fixed(1, v -> new byte[] {(byte) ((Boolean) v ? 1 : 0)}, b -> b.get() != 0);
      case TINYINT:
        return fixed(1, v -> new byte[] {(Byte) v}, ByteBuffer::get);
      case SMALLINT:
        return fixed(
            2, v -> ByteBuffer.allocate(2).putShort((Short) v).array(), ByteBuffer::getShort);
      case INTEGER:
      case DATE:
      case TIME_WITHOUT_TIME_ZONE:
        return fixed(
            4, v -> ByteBuffer.allocate(4).putInt((Integer) v).array(), ByteBuffer::getInt);
      case BIGINT:
        return fixed(8, v -> ByteBuffer.allocate(8).putLong((Long) v).array(), ByteBuffer::getLong);
      case FLOAT:
        return fixed(
            4, v -> ByteBuffer.allocate(4).putFloat((Float) v).array(), ByteBuffer::getFloat);
      case DOUBLE:
        return fixed(
            8, v -> ByteBuffer.allocate(8).putDouble((Double) v).array(), ByteBuffer::getDouble);
      case TIMESTAMP_WITHOUT_TIME_ZONE:
      case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        return fixed(
            12,
            v -> {
              TimestampData t = (TimestampData) v;
              return ByteBuffer.allocate(12)
                  .putLong(t.getMillisecond())
                  .putInt(t.getNanoOfMillisecond())
                  .array();
            },
            b -> TimestampData.fromEpochMillis(b.getLong(), b.getInt()));
      case CHAR:
      case VARCHAR:
        return variable(
            v -> ((StringData) v).toBytes(),
            bytes -> StringData.fromString(new String(bytes, StandardCharsets.UTF_8)));
      case BINARY:
      case VARBINARY:
        return variable(v -> (byte[]) v, bytes -> bytes);
      case DECIMAL:
        DecimalType decimal = (DecimalType) type;
        return variable(
            v -> ((DecimalData) v).toUnscaledBytes(),
            bytes ->
                DecimalData.fromUnscaledBytes(bytes, decimal.getPrecision(), decimal.getScale()));
      default:
        return Optional.empty();
    }
  }

  private interface Encoder {
    byte[] encode(Object value);
  }

  private interface Decoder {
    Object decode(ByteBuffer in);
  }

  private interface BytesDecoder {
    Object decode(byte[] bytes);
  }

  private static Optional<FieldCodec> fixed(int length, Encoder encoder, Decoder decoder) {
    return Optional.of(
        new FieldCodec() {
          @Override
          int fixedLength() {
            return length;
          }

          @Override
          byte[] encode(Object value) {
            return encoder.encode(value);
          }

          @Override
          Object decode(ByteBuffer in, int ignoredLength) {
            return decoder.decode(in);
          }
        });
  }

  private static Optional<FieldCodec> variable(Encoder encoder, BytesDecoder decoder) {
    return Optional.of(
        new FieldCodec() {
          @Override
          int fixedLength() {
            return -1;
          }

          @Override
          byte[] encode(Object value) {
            return encoder.encode(value);
          }

          @Override
          Object decode(ByteBuffer in, int length) {
            byte[] bytes = new byte[length];
            in.get(bytes);
            return decoder.decode(bytes);
          }
        });
  }
}
