package io.cobble.flink.state;

import io.cobble.Db;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.util.FlinkRuntimeException;

/**
 * A keyed state stored in one column family of the backend's shard: one row per (key, namespace),
 * in the bucket of the key's key group. Not thread-safe, like every Flink keyed state; only {@link
 * #getSerializedValue} (queryable state) may run on other threads and uses its own buffers.
 */
abstract class AbstractCobbleState<K, N, V> implements InternalKvState<K, N, V> {

  final CobbleKeyedStateCore<K> core;
  final Db db;
  final String family;
  final TypeSerializer<N> namespaceSerializer;
  final TypeSerializer<V> valueSerializer;
  private static final int MAX_REUSED_LENGTH = 256;
  N currentNamespace;
  final DataOutputSerializer keyOut = new DataOutputSerializer(64);
  final DataOutputSerializer valueOut = new DataOutputSerializer(128);
  final DataOutputSerializer scratch = new DataOutputSerializer(64);
  final DataInputDeserializer in = new DataInputDeserializer();
  private final ExactArrays keyArrays = new ExactArrays(MAX_REUSED_LENGTH, false);
  private final ExactArrays valueArrays = new ExactArrays(MAX_REUSED_LENGTH, true);
  // What keyOut's first prefixLength bytes hold: the key of keyVersion and this namespace object.
  private int prefixKeyVersion;
  private Object prefixNamespace;
  private int prefixLength = -1;

  AbstractCobbleState(
      CobbleKeyedStateCore<K> core,
      String family,
      TypeSerializer<N> namespaceSerializer,
      TypeSerializer<V> valueSerializer) {
    this.core = core;
    this.db = core.db;
    this.family = family;
    this.namespaceSerializer = namespaceSerializer;
    this.valueSerializer = valueSerializer;
  }

  @Override
  public TypeSerializer<K> getKeySerializer() {
    return core.keySerializer;
  }

  @Override
  public TypeSerializer<N> getNamespaceSerializer() {
    return namespaceSerializer;
  }

  @Override
  public TypeSerializer<V> getValueSerializer() {
    return valueSerializer;
  }

  @Override
  public void setCurrentNamespace(N namespace) {
    this.currentNamespace = namespace;
  }

  int bucket() {
    return core.currentKeyGroup();
  }

  /**
   * Writes the (current key, namespace) prefix into {@link #keyOut}. The prefix of the previous
   * call is kept when neither the key nor the namespace object changed since, which is the common
   * case: namespaces are immutable by Flink's contract and change far less often than keys.
   */
  void writePrefix(N namespace) {
    try {
      DataOutputSerializer key = core.currentKeyBytes();
      int version = core.keyVersion();
      if (prefixLength >= 0 && version == prefixKeyVersion && namespace == prefixNamespace) {
        keyOut.setPosition(prefixLength);
        return;
      }
      prefixLength = -1;
      keyOut.clear();
      keyOut.write(key.getSharedBuffer(), 0, key.length());
      RowKeys.writeSized(keyOut, scratch, namespaceSerializer, namespace);
      prefixKeyVersion = version;
      prefixNamespace = namespace;
      prefixLength = keyOut.length();
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot serialize the key or namespace of " + family, e);
    }
  }

  /**
   * The row key of (current key, namespace) in a reused array: valid for engine calls until the
   * next row key of the same length; {@link #keyOut}{@code .getCopyOfBuffer()} for anything kept
   * longer.
   */
  byte[] rowKey(N namespace) {
    writePrefix(namespace);
    return keyArrays.of(keyOut);
  }

  /** {@link #keyOut}'s contents in a reused array, as {@link #rowKey(Object)} returns them. */
  byte[] reusedKey() {
    return keyArrays.of(keyOut);
  }

  byte[] rowKey() {
    return rowKey(currentNamespace);
  }

  /** The stored column of a row, or null. */
  byte[] read(byte[] rowKey) {
    return db.getColumn(bucket(), family, rowKey, 0);
  }

  /** The serialized value in a reused array, valid for one engine call. */
  <T> byte[] serialize(TypeSerializer<T> serializer, T value) {
    try {
      valueOut.clear();
      serializer.serialize(value, valueOut);
      return valueArrays.of(valueOut);
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot serialize a value of " + family, e);
    }
  }

  /** {@link #valueOut}'s contents in a reused array, valid for one engine call. */
  byte[] reusedValue() {
    return valueArrays.of(valueOut);
  }

  /**
   * Deserializes bytes the engine hands over in place ({@link Db#readColumn}), and lets go of them
   * at once: they may be a memtable page or a cached block.
   */
  <T> T deserialize(TypeSerializer<T> serializer, byte[] buf, int off, int len) {
    try {
      in.setBuffer(buf, off, len);
      return serializer.deserialize(in);
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot deserialize a value of " + family, e);
    } finally {
      in.releaseArrays();
    }
  }

  <T> T deserialize(TypeSerializer<T> serializer, byte[] bytes) {
    try {
      in.setBuffer(bytes);
      return serializer.deserialize(in);
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot deserialize a value of " + family, e);
    }
  }

  @Override
  public void clear() {
    db.deleteRow(bucket(), family, rowKey());
  }

  @Override
  public byte[] getSerializedValue(
      byte[] serializedKeyAndNamespace,
      TypeSerializer<K> safeKeySerializer,
      TypeSerializer<N> safeNamespaceSerializer,
      TypeSerializer<V> safeValueSerializer)
      throws Exception {
    Tuple2<K, N> keyAndNamespace =
        KvStateSerializer.deserializeKeyAndNamespace(
            serializedKeyAndNamespace, safeKeySerializer, safeNamespaceSerializer);
    int keyGroup =
        KeyGroupRangeAssignment.assignToKeyGroup(keyAndNamespace.f0, core.numberOfKeyGroups);
    DataOutputSerializer out = new DataOutputSerializer(64);
    DataOutputSerializer tmp = new DataOutputSerializer(64);
    RowKeys.writeSized(out, tmp, safeKeySerializer, keyAndNamespace.f0);
    RowKeys.writeSized(out, tmp, safeNamespaceSerializer, keyAndNamespace.f1);
    return serializedValue(keyGroup, out.getCopyOfBuffer());
  }

  /** The value of a row in the format of Flink's {@code KvStateSerializer}, or null. */
  byte[] serializedValue(int keyGroup, byte[] rowKey) throws IOException {
    byte[][] row = db.get(keyGroup, family, rowKey);
    return row == null ? null : row[0];
  }

  @Override
  public StateIncrementalVisitor<K, N, V> getStateIncrementalVisitor(
      int recommendedMaxNumberOfReturnedRecords) {
    throw new UnsupportedOperationException(
        "The Cobble state backend has no incremental state visitor (heap-only cleanup)");
  }
}
