package io.cobble.flink.state;

import java.io.IOException;
import java.util.List;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * How keyed state is laid out in engine rows, for readers outside the backend: the row key of a
 * (key, namespace) and how value, list and map rows decode. The backend's state classes write this
 * layout; this class only exposes it.
 */
public final class StateRowFormat {

  private StateRowFormat() {}

  /** The row key (value and list state) or row-key prefix (map state) of a key and namespace. */
  public static <K, N> byte[] rowKey(
      TypeSerializer<K> keySerializer, K key, TypeSerializer<N> namespaceSerializer, N namespace)
      throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    DataOutputSerializer scratch = new DataOutputSerializer(64);
    RowKeys.writeSized(out, scratch, keySerializer, key);
    RowKeys.writeSized(out, scratch, namespaceSerializer, namespace);
    return out.getCopyOfBuffer();
  }

  public static <T> T decodeValue(byte[] raw, TypeSerializer<T> serializer) throws IOException {
    return serializer.deserialize(new DataInputDeserializer(raw));
  }

  public static <T> List<T> decodeList(byte[] raw, TypeSerializer<T> elementSerializer)
      throws IOException {
    return CobbleListState.decode(raw, elementSerializer, new DataInputDeserializer());
  }

  /** The user key of a map entry's row, which follows the (key, namespace) prefix. */
  public static <T> T decodeMapKey(byte[] rowKey, int prefixLength, TypeSerializer<T> serializer)
      throws IOException {
    return serializer.deserialize(
        new DataInputDeserializer(rowKey, prefixLength, rowKey.length - prefixLength));
  }

  /** A map entry's value: a null flag, then the value unless null. */
  public static <T> T decodeMapValue(byte[] raw, TypeSerializer<T> serializer) throws IOException {
    DataInputDeserializer in = new DataInputDeserializer(raw);
    return in.readBoolean() ? null : serializer.deserialize(in);
  }
}
