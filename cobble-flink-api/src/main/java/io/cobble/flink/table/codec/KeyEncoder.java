package io.cobble.flink.table.codec;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.Serializable;
import java.util.List;
import org.apache.flink.table.data.GenericRowData;
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
    for (int i = 0; i < types.length; i++) {
      codecs[i] = RowCodec.codecOf(types[i]);
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

  public byte[] encode(RowData row) {
    EncodeBuffer out = new EncodeBuffer(32);
    encodeInto(row, out);
    return out.toByteArray();
  }

  /** Replaces the buffer's content with the row's key, as {@link #encode} returns it. */
  public void encodeInto(RowData row, EncodeBuffer out) {
    out.clear();
    for (int i = 0; i < codecs.length; i++) {
      if (row.isNullAt(positions[i])) {
        throw new IllegalArgumentException("primary-key field " + i + " is null");
      }
      int start = out.size();
      codecs[i].write(row, positions[i], out);
      if (codecs[i].fixedLength() < 0) {
        out.prefixLength(start);
      }
    }
  }

  /** The key fields of an encoded key, in primary-key order, as Flink internal objects. */
  public Object[] decode(byte[] key) {
    GenericRowData row = new GenericRowData(codecs.length);
    decodeInto(key, row, null);
    Object[] values = new Object[codecs.length];
    for (int i = 0; i < values.length; i++) {
      values[i] = row.getField(i);
    }
    return values;
  }

  /**
   * Decodes the key fields straight into {@code out}: field {@code i} (primary-key order) goes to
   * position {@code at[i]}, or is skipped where {@code at[i]} is -1; {@code at} null puts field
   * {@code i} at {@code i}. The values keep no reference to {@code key}.
   */
  void decodeInto(byte[] key, GenericRowData out, int[] at) {
    int off = 0;
    for (int i = 0; i < codecs.length; i++) {
      int length = codecs[i].fixedLength();
      if (length < 0) {
        length = 0;
        for (int shift = 0; ; shift += 7) {
          if (shift == 35 || off >= key.length) {
            throw new IllegalArgumentException("malformed length in key");
          }
          int b = key[off++] & 0xff;
          length |= (b & 0x7f) << shift;
          if ((b & 0x80) == 0) {
            break;
          }
        }
      }
      if (length > key.length - off) {
        throw new IllegalArgumentException("key field " + i + " runs past the key's end");
      }
      int target = at == null ? i : at[i];
      if (target >= 0) {
        out.setField(target, codecs[i].decode(key, off, length));
      }
      off += length;
    }
    if (off != key.length) {
      throw new IllegalArgumentException((key.length - off) + " bytes left after the key fields");
    }
  }
}
