package io.cobble.flink.table.codec;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.binary.BinaryStringData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.utils.LogicalTypeChecks;

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

  /**
   * Appends the non-null field at {@code pos} of {@code row}, read with the row's typed accessor,
   * so that neither a boxed value nor a byte array is made for a fixed-width field or a binary
   * string.
   */
  abstract void write(RowData row, int pos, EncodeBuffer out);

  /** Reads a value of {@code length} bytes at the buffer's position and advances past it. */
  abstract Object decode(ByteBuffer in, int length);

  /** The codec of a logical type, or empty when the type has no Cobble encoding. */
  static Optional<FieldCodec> forType(LogicalType type) {
    switch (type.getTypeRoot()) {
      case BOOLEAN:
        return fixed(1, (r, p, o) -> o.putByte(r.getBoolean(p) ? 1 : 0), b -> b.get() != 0);
      case TINYINT:
        return widened(1, (r, p, o) -> o.putByte(r.getByte(p)), (b, n) -> (byte) integer(b, n));
      case SMALLINT:
        return widened(2, (r, p, o) -> o.putShort(r.getShort(p)), (b, n) -> (short) integer(b, n));
      case INTEGER:
        return widened(4, (r, p, o) -> o.putInt(r.getInt(p)), (b, n) -> (int) integer(b, n));
      case DATE:
      case TIME_WITHOUT_TIME_ZONE:
        return fixed(4, (r, p, o) -> o.putInt(r.getInt(p)), ByteBuffer::getInt);
      case BIGINT:
        return widened(8, (r, p, o) -> o.putLong(r.getLong(p)), FieldCodec::integer);
      case FLOAT:
        return fixed(
            4, (r, p, o) -> o.putInt(Float.floatToRawIntBits(r.getFloat(p))), ByteBuffer::getFloat);
      case DOUBLE:
        return widened(
            8,
            (r, p, o) -> o.putLong(Double.doubleToRawLongBits(r.getDouble(p))),
            (b, n) -> n == 4 ? (double) b.getFloat() : b.getDouble());
      case TIMESTAMP_WITHOUT_TIME_ZONE:
      case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        int precision = LogicalTypeChecks.getPrecision(type);
        return fixed(
            12,
            (r, p, o) -> {
              TimestampData t = r.getTimestamp(p, precision);
              o.putLong(t.getMillisecond());
              o.putInt(t.getNanoOfMillisecond());
            },
            b -> TimestampData.fromEpochMillis(b.getLong(), b.getInt()));
      case CHAR:
      case VARCHAR:
        return variable(
            (r, p, o) -> writeString(r.getString(p), o),
            bytes -> StringData.fromString(new String(bytes, StandardCharsets.UTF_8)));
      case BINARY:
      case VARBINARY:
        return variable((r, p, o) -> o.putBytes(r.getBinary(p)), bytes -> bytes);
      case DECIMAL:
        DecimalType decimal = (DecimalType) type;
        int decimalPrecision = decimal.getPrecision();
        int scale = decimal.getScale();
        return variable(
            (r, p, o) -> o.putBytes(r.getDecimal(p, decimalPrecision, scale).toUnscaledBytes()),
            bytes -> DecimalData.fromUnscaledBytes(bytes, decimalPrecision, scale));
      default:
        return Optional.empty();
    }
  }

  /**
   * An integer written as a narrower (or equally wide) integer type: a column widened by ALTER
   * TABLE keeps the values written before in their old width, and reads them sign-extended.
   */
  private static long integer(ByteBuffer in, int length) {
    switch (length) {
      case 1:
        return in.get();
      case 2:
        return in.getShort();
      case 4:
        return in.getInt();
      case 8:
        return in.getLong();
      default:
        throw new IllegalArgumentException(length + "-byte value is not an integer");
    }
  }

  /** UTF-8 bytes of a string, copied straight from a binary string's memory segments. */
  private static void writeString(StringData value, EncodeBuffer out) {
    if (value instanceof BinaryStringData) {
      BinaryStringData binary = (BinaryStringData) value;
      binary.ensureMaterialized();
      out.putSegments(binary.getSegments(), binary.getOffset(), binary.getSizeInBytes());
    } else {
      out.putBytes(value.toBytes());
    }
  }

  private interface Writer {
    void write(RowData row, int pos, EncodeBuffer out);
  }

  private interface Decoder {
    Object decode(ByteBuffer in);
  }

  private interface BytesDecoder {
    Object decode(byte[] bytes);
  }

  private static Optional<FieldCodec> fixed(int length, Writer writer, Decoder decoder) {
    return Optional.of(
        new FieldCodec() {
          @Override
          int fixedLength() {
            return length;
          }

          @Override
          void write(RowData row, int pos, EncodeBuffer out) {
            writer.write(row, pos, out);
          }

          @Override
          Object decode(ByteBuffer in, int ignoredLength) {
            return decoder.decode(in);
          }
        });
  }

  private interface WidthDecoder {
    Object decode(ByteBuffer in, int length);
  }

  /**
   * A fixed-width type whose column may hold values of a narrower type of its family (written
   * before an ALTER TABLE widened it): the value's length tells which. A longer value cannot come
   * from a widening and is rejected.
   */
  private static Optional<FieldCodec> widened(int length, Writer writer, WidthDecoder decoder) {
    return Optional.of(
        new FieldCodec() {
          @Override
          int fixedLength() {
            return length;
          }

          @Override
          void write(RowData row, int pos, EncodeBuffer out) {
            writer.write(row, pos, out);
          }

          @Override
          Object decode(ByteBuffer in, int valueLength) {
            if (valueLength > length) {
              throw new IllegalArgumentException(
                  valueLength + "-byte value is wider than the column's " + length + " bytes");
            }
            return decoder.decode(in, valueLength);
          }
        });
  }

  private static Optional<FieldCodec> variable(Writer writer, BytesDecoder decoder) {
    return Optional.of(
        new FieldCodec() {
          @Override
          int fixedLength() {
            return -1;
          }

          @Override
          void write(RowData row, int pos, EncodeBuffer out) {
            writer.write(row, pos, out);
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
