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
 * next to each other. Uses the row layout of the synchronous state classes. A reader owns
 * serializers and buffers, so each thread makes its own from the state's {@link Factory}, which
 * holds no reader and nothing a read changes.
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

  private StateRowReader(Factory<K, N> f) {
    this.core = f.core;
    this.family = f.family;
    this.keySerializer = f.core.keySerializer.duplicate();
    this.namespaceSerializer = f.namespaceSerializer.duplicate();
    this.valueSerializer = f.valueSerializer.duplicate();
    this.userKeySerializer = f.userKeySerializer == null ? null : f.userKeySerializer.duplicate();
  }

  /**
   * The readers of the state {@code stateName}; {@code userKeySerializer} is null except for map
   * state, whose {@code valueSerializer} is the serializer of one map value.
   */
  public static <K, N> Factory<K, N> factory(
      CobbleKeyedStateCore<K> core,
      String stateName,
      TypeSerializer<N> namespaceSerializer,
      TypeSerializer<?> valueSerializer,
      TypeSerializer<?> userKeySerializer) {
    return new Factory<>(
        core,
        CobbleKeyedStateCore.stateFamily(stateName),
        namespaceSerializer,
        valueSerializer,
        userKeySerializer);
  }

  /** What the readers of one state read; makes a reader per thread and can read nothing itself. */
  public static final class Factory<K, N> {
    private final CobbleKeyedStateCore<K> core;
    private final String family;
    private final TypeSerializer<N> namespaceSerializer;
    private final TypeSerializer<Object> valueSerializer;
    private final TypeSerializer<Object> userKeySerializer;

    @SuppressWarnings("unchecked")
    private Factory(
        CobbleKeyedStateCore<K> core,
        String family,
        TypeSerializer<N> namespaceSerializer,
        TypeSerializer<?> valueSerializer,
        TypeSerializer<?> userKeySerializer) {
      this.core = core;
      this.family = family;
      this.namespaceSerializer = namespaceSerializer.duplicate();
      this.valueSerializer = (TypeSerializer<Object>) valueSerializer.duplicate();
      this.userKeySerializer =
          userKeySerializer == null ? null : (TypeSerializer<Object>) userKeySerializer.duplicate();
    }

    /** A reader for the calling thread alone. */
    public StateRowReader<K, N> newReader() {
      return new StateRowReader<>(this);
    }

    /** Whether the state is a map state: its rows are (key, namespace, user key). */
    public boolean isMap() {
      return userKeySerializer != null;
    }
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
