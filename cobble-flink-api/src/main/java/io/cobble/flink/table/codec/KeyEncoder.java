package io.cobble.flink.table.codec;

import java.io.ByteArrayOutputStream;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.LogicalType;

/**
 * The Cobble key of a row: its primary-key fields in primary-key order, each in its {@link
 * FieldCodec} form, variable-length fields preceded by their length as an unsigned LEB128 varint.
 * Key fields are never null (Flink makes primary-key columns NOT NULL). The encoding is stable
 * across versions because buckets are hashed from it ({@code BucketRouter}) and lookups rebuild it
 * from probe values; it is not order-preserving.
 */
public final class KeyEncoder implements Serializable {

  private static final long serialVersionUID = 1L;

  private final LogicalType[] types;
  private final int[] positions;
  private transient FieldCodec[] codecs;
  private transient RowData.FieldGetter[] getters;

  /**
   * @param types the key fields' types in primary-key order
   * @param positions where each key field sits in the rows given to {@link #encode}
   */
  public KeyEncoder(List<LogicalType> types, int[] positions) {
    if (types.size() != positions.length) {
      throw new IllegalArgumentException("one position per key type expected");
    }
    this.types = types.toArray(new LogicalType[0]);
    this.positions = positions.clone();
    init();
  }

  private void init() {
    codecs = new FieldCodec[types.length];
    getters = new RowData.FieldGetter[types.length];
    for (int i = 0; i < types.length; i++) {
      codecs[i] = RowCodec.codecOf(types[i]);
      getters[i] = RowData.createFieldGetter(types[i], positions[i]);
    }
  }

  public byte[] encode(RowData row) {
    if (codecs == null) {
      init();
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(32);
    for (int i = 0; i < codecs.length; i++) {
      Object value = getters[i].getFieldOrNull(row);
      if (value == null) {
        throw new IllegalArgumentException("primary-key field " + i + " is null");
      }
      byte[] bytes = codecs[i].encode(value);
      if (codecs[i].fixedLength() < 0) {
        writeVarint(out, bytes.length);
      }
      out.write(bytes, 0, bytes.length);
    }
    return out.toByteArray();
  }

  /** The key fields of an encoded key, in primary-key order, as Flink internal objects. */
  public Object[] decode(byte[] key) {
    if (codecs == null) {
      init();
    }
    ByteBuffer in = ByteBuffer.wrap(key);
    Object[] values = new Object[codecs.length];
    for (int i = 0; i < codecs.length; i++) {
      int length = codecs[i].fixedLength();
      values[i] = codecs[i].decode(in, length < 0 ? readVarint(in) : length);
    }
    if (in.hasRemaining()) {
      throw new IllegalArgumentException(in.remaining() + " bytes left after the key fields");
    }
    return values;
  }

  private static void writeVarint(ByteArrayOutputStream out, int value) {
    while ((value & ~0x7f) != 0) {
      out.write((value & 0x7f) | 0x80);
      value >>>= 7;
    }
    out.write(value);
  }

  private static int readVarint(ByteBuffer in) {
    int value = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      int b = in.get() & 0xff;
      value |= (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return value;
      }
    }
    throw new IllegalArgumentException("malformed length in key");
  }
}
