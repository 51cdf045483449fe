package io.cobble.flink.state;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * The row key layout of keyed state: {@code varint(len) key varint(len) namespace [user key]}. The
 * lengths make a (key, namespace) prefix unambiguous whatever the serializers, so map entries of
 * one (key, namespace) are one contiguous range. The bucket (key group) is not part of the key: the
 * engine keeps it in front.
 */
final class RowKeys {
  private RowKeys() {}

  static void writeVarInt(DataOutputSerializer out, int v) throws IOException {
    while ((v & ~0x7F) != 0) {
      out.writeByte((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    out.writeByte(v);
  }

  static int readVarInt(DataInputDeserializer in) throws IOException {
    int v = 0;
    for (int shift = 0; ; shift += 7) {
      int b = in.readUnsignedByte();
      v |= (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return v;
      }
    }
  }

  /** Serializes {@code value} with a varint length before it, using {@code scratch}. */
  static <T> void writeSized(
      DataOutputSerializer out, DataOutputSerializer scratch, TypeSerializer<T> ser, T value)
      throws IOException {
    scratch.clear();
    ser.serialize(value, scratch);
    writeVarInt(out, scratch.length());
    out.write(scratch.getSharedBuffer(), 0, scratch.length());
  }

  /** Reads a length-prefixed value written by {@link #writeSized}. */
  static <T> T readSized(DataInputDeserializer in, TypeSerializer<T> ser) throws IOException {
    int len = readVarInt(in);
    int end = in.getPosition() + len;
    T value = ser.deserialize(in);
    if (in.getPosition() != end) {
      throw new IOException(
          "a serialized key part read "
              + (in.getPosition() - (end - len))
              + " bytes instead of "
              + len
              + " with "
              + ser);
    }
    return value;
  }

  /** Skips a length-prefixed part. */
  static void skipSized(DataInputDeserializer in) throws IOException {
    int len = readVarInt(in);
    in.skipBytesToRead(len);
  }
}
