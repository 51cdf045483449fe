package io.cobble.flink.table.codec;

import java.util.Arrays;
import java.util.Optional;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.binary.BinaryRowData;
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

  /**
   * The value of the {@code length} bytes at {@code buf[off]}; keeps no reference to {@code buf}.
   */
  abstract Object decode(byte[] buf, int off, int length);

  /**
   * As {@link #decode}, but the value may keep a reference to {@code buf} instead of a copy of its
   * bytes: for arrays the caller hands over (a read's fresh values), so a string becomes a binary
   * string over the stored UTF-8 bytes without a copy or a Java string in between.
   */
  Object wrap(byte[] buf, int off, int length) {
    return decode(buf, off, length);
  }

  /** The codec of a logical type, or empty when the type has no Cobble encoding. */
  static Optional<FieldCodec> forType(LogicalType type) {
    switch (type.getTypeRoot()) {
      case BOOLEAN:
        return fixed(1, (r, p, o) -> o.putByte(r.getBoolean(p) ? 1 : 0), (b, i) -> b[i] != 0);
      case TINYINT:
        return widened(
            1, (r, p, o) -> o.putByte(r.getByte(p)), (b, i, n) -> (byte) integer(b, i, n));
      case SMALLINT:
        return widened(
            2, (r, p, o) -> o.putShort(r.getShort(p)), (b, i, n) -> (short) integer(b, i, n));
      case INTEGER:
        return widened(4, (r, p, o) -> o.putInt(r.getInt(p)), (b, i, n) -> (int) integer(b, i, n));
      case DATE:
      case TIME_WITHOUT_TIME_ZONE:
        return fixed(4, (r, p, o) -> o.putInt(r.getInt(p)), FieldCodec::getInt);
      case BIGINT:
        return widened(8, (r, p, o) -> o.putLong(r.getLong(p)), FieldCodec::integer);
      case FLOAT:
        return fixed(
            4,
            (r, p, o) -> o.putInt(Float.floatToRawIntBits(r.getFloat(p))),
            (b, i) -> Float.intBitsToFloat(getInt(b, i)));
      case DOUBLE:
        return widened(
            8,
            (r, p, o) -> o.putLong(Double.doubleToRawLongBits(r.getDouble(p))),
            FieldCodec::floating);
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
            (b, i) -> TimestampData.fromEpochMillis(getLong(b, i), getInt(b, i + 8)));
      case CHAR:
      case VARCHAR:
        return variable(
            (r, p, o) -> {
              if (r instanceof BinaryRowData) {
                writeString((BinaryRowData) r, p, o);
              } else {
                writeString(r.getString(p), o);
              }
            },
            (b, i, n) -> StringData.fromBytes(Arrays.copyOfRange(b, i, i + n)),
            StringData::fromBytes);
      case BINARY:
      case VARBINARY:
        return variable(
            (r, p, o) -> o.putBytes(r.getBinary(p)),
            (b, i, n) -> Arrays.copyOfRange(b, i, i + n),
            (b, i, n) -> i == 0 && n == b.length ? b : Arrays.copyOfRange(b, i, i + n));
      case DECIMAL:
        DecimalType decimal = (DecimalType) type;
        int decimalPrecision = decimal.getPrecision();
        int scale = decimal.getScale();
        return variable(
            (r, p, o) -> o.putBytes(r.getDecimal(p, decimalPrecision, scale).toUnscaledBytes()),
            (b, i, n) ->
                DecimalData.fromUnscaledBytes(
                    Arrays.copyOfRange(b, i, i + n), decimalPrecision, scale),
            (b, i, n) ->
                DecimalData.fromUnscaledBytes(
                    i == 0 && n == b.length ? b : Arrays.copyOfRange(b, i, i + n),
                    decimalPrecision,
                    scale));
      default:
        return Optional.empty();
    }
  }

  /**
   * An integer written as a narrower (or equally wide) integer type: a column widened by ALTER
   * TABLE keeps the values written before in their old width, and reads them sign-extended.
   */
  private static long integer(byte[] b, int off, int length) {
    switch (length) {
      case 1:
        return b[off];
      case 2:
        return (short) ((b[off] << 8) | (b[off + 1] & 0xff));
      case 4:
        return getInt(b, off);
      case 8:
        return getLong(b, off);
      default:
        throw new IllegalArgumentException(length + "-byte value is not an integer");
    }
  }

  /** A DOUBLE, or a FLOAT written before ALTER TABLE widened the column. */
  private static double floating(byte[] b, int off, int length) {
    switch (length) {
      case 4:
        return Float.intBitsToFloat(getInt(b, off));
      case 8:
        return Double.longBitsToDouble(getLong(b, off));
      default:
        throw new IllegalArgumentException(length + "-byte value is not a floating-point number");
    }
  }

  private static int getInt(byte[] b, int off) {
    return (b[off] << 24)
        | ((b[off + 1] & 0xff) << 16)
        | ((b[off + 2] & 0xff) << 8)
        | (b[off + 3] & 0xff);
  }

  private static long getLong(byte[] b, int off) {
    return ((long) getInt(b, off) << 32) | (getInt(b, off + 4) & 0xffffffffL);
  }

  /**
   * UTF-8 bytes of a binary row's string field, copied from the row's segments without the two
   * objects {@link BinaryRowData#getString} makes per call (the sink encodes every row it receives
   * this way). In a binary row the field's 8-byte slot, in the first segment, holds either the
   * string's offset from the row's start (high 32 bits) and length (low 32), or, with its top bit
   * set, a string of up to 7 bytes inline; the rare inline strings go through {@code getString}.
   */
  private static void writeString(BinaryRowData row, int pos, EncodeBuffer out) {
    MemorySegment[] segments = row.getSegments();
    int slot =
        row.getOffset() + BinaryRowData.calculateBitSetWidthInBytes(row.getArity()) + pos * 8;
    long offsetAndLength = segments[0].getLong(slot);
    if (offsetAndLength < 0) {
      writeString(row.getString(pos), out);
    } else {
      out.putSegments(
          segments, row.getOffset() + (int) (offsetAndLength >>> 32), (int) offsetAndLength);
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
    Object decode(byte[] buf, int off);
  }

  private interface BytesDecoder {
    Object decode(byte[] buf, int off, int length);
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
          Object decode(byte[] buf, int off, int valueLength) {
            if (valueLength != length) {
              throw new IllegalArgumentException(
                  valueLength + "-byte value where the type has " + length + " bytes");
            }
            return decoder.decode(buf, off);
          }
        });
  }

  private interface WidthDecoder {
    Object decode(byte[] buf, int off, int length);
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
          Object decode(byte[] buf, int off, int valueLength) {
            if (valueLength > length) {
              throw new IllegalArgumentException(
                  valueLength + "-byte value is wider than the column's " + length + " bytes");
            }
            return decoder.decode(buf, off, valueLength);
          }
        });
  }

  /**
   * @param decoder copies the bytes it keeps
   * @param wrapper may keep the array it is given
   */
  private static Optional<FieldCodec> variable(
      Writer writer, BytesDecoder decoder, BytesDecoder wrapper) {
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
          Object decode(byte[] buf, int off, int length) {
            return decoder.decode(buf, off, length);
          }

          @Override
          Object wrap(byte[] buf, int off, int length) {
            return wrapper.decode(buf, off, length);
          }
        });
  }
}
