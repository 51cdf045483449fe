package io.cobble.flink.state;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.Preconditions;

/**
 * {@code ListState}: one row per (key, namespace) in a {@code list_append} column, elements as
 * {@code varint(length) bytes}. {@code add} and {@code addAll} append through the engine's merge
 * operator without reading the list.
 */
final class CobbleListState<K, N, V> extends AbstractCobbleState<K, N, List<V>>
    implements InternalListState<K, N, V> {

  private final TypeSerializer<V> elementSerializer;

  CobbleListState(
      CobbleKeyedStateCore<K> core,
      String family,
      TypeSerializer<N> namespaceSerializer,
      TypeSerializer<List<V>> listSerializer) {
    super(core, family, namespaceSerializer, listSerializer);
    this.elementSerializer = ((ListSerializer<V>) listSerializer).getElementSerializer();
  }

  @Override
  public Iterable<V> get() {
    return getInternal();
  }

  @Override
  public List<V> getInternal() {
    byte[] raw = read(rowKey());
    if (raw == null || raw.length == 0) {
      return null;
    }
    try {
      return decode(raw, elementSerializer, in);
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot decode a list of " + family, e);
    }
  }

  @Override
  public void add(V value) {
    Preconditions.checkNotNull(value, "You cannot add null to a ListState.");
    valueOut.clear();
    appendElement(valueOut, scratch, elementSerializer, value);
    db.merge(bucket(), family, rowKey(), 0, reusedValue());
  }

  @Override
  public void addAll(List<V> values) {
    Preconditions.checkNotNull(values, "List of values to add cannot be null.");
    if (values.isEmpty()) {
      return;
    }
    db.merge(bucket(), family, rowKey(), 0, encode(values));
  }

  @Override
  public void update(List<V> values) {
    Preconditions.checkNotNull(values, "List of values to add cannot be null.");
    if (values.isEmpty()) {
      clear();
      return;
    }
    db.put(bucket(), family, rowKey(), 0, encode(values));
  }

  @Override
  public void updateInternal(List<V> values) {
    update(values);
  }

  private byte[] encode(List<V> values) {
    valueOut.clear();
    for (V v : values) {
      Preconditions.checkNotNull(v, "You cannot add null to a ListState.");
      appendElement(valueOut, scratch, elementSerializer, v);
    }
    return reusedValue();
  }

  @Override
  public void mergeNamespaces(N target, Collection<N> sources) {
    if (sources == null || sources.isEmpty()) {
      return;
    }
    valueOut.clear();
    for (N source : sources) {
      if (source == null) {
        continue;
      }
      byte[] key = rowKey(source);
      byte[] raw = read(key);
      if (raw != null) {
        db.deleteRow(bucket(), family, key);
        try {
          valueOut.write(raw);
        } catch (IOException e) {
          throw new FlinkRuntimeException(e);
        }
      }
    }
    if (valueOut.length() > 0) {
      byte[] operand = valueOut.getCopyOfBuffer();
      db.merge(bucket(), family, rowKey(target), 0, operand);
    }
  }

  @Override
  byte[] serializedValue(int keyGroup, byte[] rowKey) throws IOException {
    byte[][] row = db.get(keyGroup, family, rowKey);
    if (row == null || row[0] == null) {
      return null;
    }
    // Flink's KvStateSerializer.deserializeList format: elements separated by one byte.
    DataInputDeserializer source = new DataInputDeserializer(row[0]);
    DataOutputSerializer out = new DataOutputSerializer(row[0].length);
    boolean first = true;
    while (source.available() > 0) {
      int len = RowKeys.readVarInt(source);
      if (!first) {
        out.writeByte(',');
      }
      first = false;
      out.write(source, len);
    }
    return out.getCopyOfBuffer();
  }

  /**
   * Appends one element in the list column format. An element of a fixed-length type is serialized
   * straight into {@code out} after its known length, skipping the copy through {@code scratch}.
   */
  static <T> void appendElement(
      DataOutputSerializer out, DataOutputSerializer scratch, TypeSerializer<T> ser, T element) {
    try {
      int fixed = ser.getLength();
      if (fixed > 0) {
        RowKeys.writeVarInt(out, fixed);
        int start = out.length();
        ser.serialize(element, out);
        if (out.length() - start != fixed) {
          throw new IOException(
              ser
                  + " declares length "
                  + fixed
                  + " but wrote "
                  + (out.length() - start)
                  + " bytes");
        }
      } else {
        RowKeys.writeSized(out, scratch, ser, element);
      }
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot serialize a list element", e);
    }
  }

  static <T> List<T> decode(byte[] raw, TypeSerializer<T> ser, DataInputDeserializer in)
      throws IOException {
    in.setBuffer(raw);
    int count = 0;
    while (in.available() > 0) {
      RowKeys.skipSized(in);
      count++;
    }
    // Sized up front: a list of a few elements would otherwise carry ten slots.
    List<T> out = new ArrayList<>(count);
    in.setBuffer(raw);
    while (in.available() > 0) {
      out.add(RowKeys.readSized(in, ser));
    }
    return out;
  }
}
