package io.cobble.flink.state;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;

/**
 * Translates rows between Cobble's layout and Flink's canonical savepoint layout (the one the
 * RocksDB backend uses). Canonical keys are {@code key-group prefix, key, [length], namespace,
 * [length], [user key]}, the lengths present only when both key and namespace serializers have a
 * variable length; Cobble keys are {@code varint(len) key varint(len) namespace [user key]} with
 * the key group as the bucket. List values are elements joined by one {@code ','} byte canonically
 * and {@code varint(len) element} in Cobble; map values ({@code null flag, value}) and all other
 * values are the same bytes in both.
 */
final class CanonicalRows {

  static final byte LIST_DELIMITER = ',';

  private final int prefixBytes;

  CanonicalRows(int numberOfKeyGroups) {
    this.prefixBytes =
        CompositeKeySerializationUtils.computeRequiredBytesInKeyGroupPrefix(numberOfKeyGroups);
  }

  /** Writes a Cobble state row key as a canonical key of {@code keyGroup}. */
  void toCanonicalKey(int keyGroup, byte[] rowKey, boolean ambiguous, DataOutputSerializer out)
      throws IOException {
    out.clear();
    CompositeKeySerializationUtils.writeKeyGroup(keyGroup, prefixBytes, out);
    DataInputDeserializer in = new DataInputDeserializer(rowKey);
    int keyLen = RowKeys.readVarInt(in);
    out.write(rowKey, in.getPosition(), keyLen);
    in.skipBytesToRead(keyLen);
    if (ambiguous) {
      CompositeKeySerializationUtils.writeVariableIntBytes(keyLen, out);
    }
    int nsLen = RowKeys.readVarInt(in);
    out.write(rowKey, in.getPosition(), nsLen);
    in.skipBytesToRead(nsLen);
    if (ambiguous) {
      CompositeKeySerializationUtils.writeVariableIntBytes(nsLen, out);
    }
    int rest = in.available();
    out.write(rowKey, rowKey.length - rest, rest);
  }

  /** Writes a Cobble queue row key (the element) as a canonical key of {@code keyGroup}. */
  void toCanonicalQueueKey(int keyGroup, byte[] element, DataOutputSerializer out)
      throws IOException {
    out.clear();
    CompositeKeySerializationUtils.writeKeyGroup(keyGroup, prefixBytes, out);
    out.write(element);
  }

  /** Cobble's list value as the canonical one. */
  static byte[] toCanonicalList(byte[] cobbleList, DataOutputSerializer out) throws IOException {
    out.clear();
    DataInputDeserializer in = new DataInputDeserializer(cobbleList);
    boolean first = true;
    while (in.available() > 0) {
      int len = RowKeys.readVarInt(in);
      if (!first) {
        out.writeByte(LIST_DELIMITER);
      }
      first = false;
      out.write(cobbleList, in.getPosition(), len);
      in.skipBytesToRead(len);
    }
    return out.getCopyOfBuffer();
  }

  /** The key group in a canonical key's prefix. */
  int keyGroupOf(byte[] canonicalKey) throws IOException {
    return CompositeKeySerializationUtils.readKeyGroup(
        prefixBytes, new DataInputDeserializer(canonicalKey));
  }

  /**
   * Writes a canonical state key as a Cobble row key, reading key and namespace with their
   * serializers to find where each ends; {@code hasUserKey} keeps the remaining bytes (a map's user
   * key), otherwise none may remain.
   */
  void toCobbleKey(
      byte[] canonicalKey,
      TypeSerializer<?> keySerializer,
      TypeSerializer<?> namespaceSerializer,
      boolean ambiguous,
      boolean hasUserKey,
      DataOutputSerializer out)
      throws IOException {
    out.clear();
    DataInputDeserializer in = new DataInputDeserializer(canonicalKey);
    in.skipBytesToRead(prefixBytes);
    copySized(in, canonicalKey, keySerializer, ambiguous, out, "key");
    copySized(in, canonicalKey, namespaceSerializer, ambiguous, out, "namespace");
    int rest = in.available();
    if (hasUserKey) {
      if (rest == 0) {
        throw new IOException("the map entry has no user key");
      }
      out.write(canonicalKey, canonicalKey.length - rest, rest);
    } else if (rest != 0) {
      throw new IOException(rest + " unexpected bytes after the namespace");
    }
  }

  private static void copySized(
      DataInputDeserializer in,
      byte[] source,
      TypeSerializer<?> serializer,
      boolean ambiguous,
      DataOutputSerializer out,
      String part)
      throws IOException {
    int start = in.getPosition();
    serializer.deserialize(in);
    int len = in.getPosition() - start;
    if (ambiguous) {
      int written = 0;
      int shift = 0;
      int remaining = len;
      do {
        written |= in.readUnsignedByte() << shift;
        shift += 8;
        remaining >>>= 8;
      } while (remaining != 0);
      if (written != len) {
        throw new IOException(
            "the " + part + " length is " + written + " but its serializer read " + len + " bytes");
      }
    }
    RowKeys.writeVarInt(out, len);
    out.write(source, start, len);
  }

  /** The element bytes of a canonical queue key. */
  byte[] queueElement(byte[] canonicalKey, TypeSerializer<?> elementSerializer) throws IOException {
    DataInputDeserializer in = new DataInputDeserializer(canonicalKey);
    in.skipBytesToRead(prefixBytes);
    elementSerializer.deserialize(in);
    if (in.available() != 0) {
      throw new IOException(in.available() + " unexpected bytes after the timer element");
    }
    return java.util.Arrays.copyOfRange(canonicalKey, prefixBytes, canonicalKey.length);
  }

  /** A canonical list value in Cobble's list layout; each element is read to find its end. */
  static byte[] toCobbleList(
      byte[] canonicalList, TypeSerializer<?> elementSerializer, DataOutputSerializer out)
      throws IOException {
    out.clear();
    DataInputDeserializer in = new DataInputDeserializer(canonicalList);
    while (in.available() > 0) {
      int start = in.getPosition();
      elementSerializer.deserialize(in);
      int len = in.getPosition() - start;
      RowKeys.writeVarInt(out, len);
      out.write(canonicalList, start, len);
      if (in.available() > 0) {
        byte delimiter = in.readByte();
        if (delimiter != LIST_DELIMITER) {
          throw new IOException("list elements are separated by " + delimiter + ", not ','");
        }
      }
    }
    return out.getCopyOfBuffer();
  }

  /** Checks a value by reading it whole; map values carry their null flag first. */
  static void checkValue(byte[] value, TypeSerializer<?> serializer, boolean nullFlag)
      throws IOException {
    DataInputDeserializer in = new DataInputDeserializer(value);
    if (nullFlag && in.readBoolean()) {
      // RocksDB writes the serializer's own form of null after the flag; Cobble ignores it.
      return;
    }
    serializer.deserialize(in);
    if (in.available() != 0) {
      throw new IOException(in.available() + " unexpected bytes after the value");
    }
  }
}
