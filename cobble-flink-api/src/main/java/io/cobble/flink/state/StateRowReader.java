package io.cobble.flink.state;

import io.cobble.ReadOptions;
import java.io.IOException;
import java.util.List;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Point reads of one keyed state's rows for an explicit key, namespace and (for map state) user
 * key, without the backend's key context: what lets asynchronous state reads run on several threads
 * next to each other. Uses the row layout of the synchronous state classes. One instance per thread
 * ({@link #duplicate()}): it owns serializers and buffers.
 */
public final class StateRowReader<K, N> {

  private final CobbleKeyedStateCore<K> core;
  private final String family;
  private final TypeSerializer<K> keySerializer;
  private final TypeSerializer<N> namespaceSerializer;
  private final TypeSerializer<Object> valueSerializer;
  private final TypeSerializer<Object> userKeySerializer;
  private final DataOutputSerializer out = new DataOutputSerializer(64);
  private final DataOutputSerializer scratch = new DataOutputSerializer(64);
  private final DataInputDeserializer in = new DataInputDeserializer();

  @SuppressWarnings("unchecked")
  private StateRowReader(
      CobbleKeyedStateCore<K> core,
      String family,
      TypeSerializer<N> namespaceSerializer,
      TypeSerializer<?> valueSerializer,
      TypeSerializer<?> userKeySerializer) {
    this.core = core;
    this.family = family;
    this.keySerializer = core.keySerializer.duplicate();
    this.namespaceSerializer = namespaceSerializer.duplicate();
    this.valueSerializer = (TypeSerializer<Object>) valueSerializer.duplicate();
    this.userKeySerializer =
        userKeySerializer == null ? null : (TypeSerializer<Object>) userKeySerializer.duplicate();
  }

  /**
   * A reader of the state {@code stateName}; {@code userKeySerializer} is null except for map
   * state, whose {@code valueSerializer} is the serializer of one map value.
   */
  public static <K, N> StateRowReader<K, N> of(
      CobbleKeyedStateCore<K> core,
      String stateName,
      TypeSerializer<N> namespaceSerializer,
      TypeSerializer<?> valueSerializer,
      TypeSerializer<?> userKeySerializer) {
    return new StateRowReader<>(
        core,
        CobbleKeyedStateCore.stateFamily(stateName),
        namespaceSerializer,
        valueSerializer,
        userKeySerializer);
  }

  /** A reader of the same state for another thread. */
  public StateRowReader<K, N> duplicate() {
    return new StateRowReader<>(
        core, family, namespaceSerializer, valueSerializer, userKeySerializer);
  }

  public boolean isMap() {
    return userKeySerializer != null;
  }

  /** The row key of (key, namespace[, user key]). */
  public byte[] rowKey(K key, N namespace, Object userKey) throws IOException {
    out.clear();
    RowKeys.writeSized(out, scratch, keySerializer, key);
    RowKeys.writeSized(out, scratch, namespaceSerializer, namespace);
    if (userKeySerializer != null) {
      userKeySerializer.serialize(userKey, out);
    }
    return out.getCopyOfBuffer();
  }

  /**
   * The stored values of rows of one key group, in the order of {@code rowKeys}; null if absent.
   */
  public byte[][] readAll(int keyGroup, List<byte[]> rowKeys) {
    List<byte[][]> rows = core.db.multiGet(keyGroup, family, rowKeys, ReadOptions.DEFAULT);
    byte[][] values = new byte[rows.size()][];
    for (int i = 0; i < values.length; i++) {
      byte[][] row = rows.get(i);
      values[i] = row == null ? null : row[0];
    }
    return values;
  }

  /** Decodes a stored value: a map value carries a null flag in front. */
  public Object decode(byte[] raw) throws IOException {
    if (raw == null) {
      return null;
    }
    in.setBuffer(raw);
    if (userKeySerializer != null && in.readBoolean()) {
      return null;
    }
    return valueSerializer.deserialize(in);
  }
}
