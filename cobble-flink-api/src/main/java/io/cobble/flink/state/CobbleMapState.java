package io.cobble.flink.state;

import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.util.ValueSink;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.util.FlinkRuntimeException;

/**
 * {@code MapState}: one row per (key, namespace, user key); the column holds a null flag and the
 * value, so null values are stored. Iteration is a prefix scan read in chunks, so an iterator that
 * is abandoned holds no engine resources.
 */
final class CobbleMapState<K, N, UK, UV> extends AbstractCobbleState<K, N, Map<UK, UV>>
    implements InternalMapState<K, N, UK, UV> {

  private static final int CHUNK = 128;
  // Entries per engine write of putAll: bounds the batch buffers whatever the map's size.
  private static final int BATCH = 256;
  private static final ScanOptions FIRST_CHUNK = ScanOptions.defaults().maxRows(CHUNK);

  private final TypeSerializer<UK> userKeySerializer;
  private final TypeSerializer<UV> userValueSerializer;
  // putAll's batch: the entries' row keys and values back to back, and where each one ends.
  private final DataOutputSerializer batchKeys = new DataOutputSerializer(256);
  private final DataOutputSerializer batchValues = new DataOutputSerializer(256);
  private final int[] batchKeyEnds = new int[BATCH];
  private final int[] batchValueEnds = new int[BATCH];
  // contains() needs no bytes; get() takes the value readColumn handed over, decoded in place.
  private static final ValueSink IGNORE = (buf, off, len) -> {};
  private UV readValue;
  private final ValueSink valueReader = (buf, off, len) -> readValue = decodeValue(buf, off, len);
  // The views entries(), keys() and values() hand out: each iterator() reads the current key and
  // namespace when it is called, so one view per state serves them all (no allocation per call).
  private final Iterable<Map.Entry<UK, UV>> entriesView = this::iterator;
  private final Iterable<UK> keysView =
      () -> {
        writePrefix(currentNamespace);
        return new KeyIterator(bucket(), keyOut.getCopyOfBuffer());
      };
  private final Iterable<UV> valuesView =
      () -> {
        writePrefix(currentNamespace);
        return new ValueIterator(bucket(), keyOut.getCopyOfBuffer());
      };

  CobbleMapState(
      CobbleKeyedStateCore<K> core,
      String family,
      TypeSerializer<N> namespaceSerializer,
      TypeSerializer<Map<UK, UV>> mapSerializer) {
    super(core, family, namespaceSerializer, mapSerializer);
    MapSerializer<UK, UV> ms = (MapSerializer<UK, UV>) mapSerializer;
    this.userKeySerializer = ms.getKeySerializer();
    this.userValueSerializer = ms.getValueSerializer();
  }

  private byte[] entryKey(UK userKey) {
    try {
      writePrefix(currentNamespace);
      userKeySerializer.serialize(userKey, keyOut);
      return reusedKey();
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot serialize a user key of " + family, e);
    }
  }

  private byte[] encodeValue(UV value) {
    try {
      valueOut.clear();
      valueOut.writeBoolean(value == null);
      if (value != null) {
        userValueSerializer.serialize(value, valueOut);
      }
      return reusedValue();
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot serialize a value of " + family, e);
    }
  }

  /**
   * Decodes a value the engine hands over in place ({@link io.cobble.Db#readColumn}) and lets go of
   * its bytes at once: they may be a memtable page or a cached block.
   */
  private UV decodeValue(byte[] buf, int off, int len) {
    try {
      in.setBuffer(buf, off, len);
      return in.readBoolean() ? null : userValueSerializer.deserialize(in);
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot deserialize a value of " + family, e);
    } finally {
      in.releaseArrays();
    }
  }

  @Override
  public UV get(UK key) {
    if (!db.readColumn(bucket(), family, entryKey(key), 0, valueReader)) {
      return null;
    }
    UV value = readValue;
    readValue = null;
    return value;
  }

  @Override
  public void put(UK key, UV value) {
    db.put(bucket(), family, entryKey(key), 0, encodeValue(value));
  }

  /**
   * Encodes the entries into two reused buffers and hands them to the engine as one write per
   * {@link #BATCH} entries, so a batch takes the engine's lock once and allocates nothing per
   * entry.
   */
  @Override
  public void putAll(Map<UK, UV> map) {
    if (map == null || map.isEmpty()) {
      return;
    }
    writePrefix(currentNamespace);
    int prefixLength = keyOut.length();
    batchKeys.clear();
    batchValues.clear();
    int count = 0;
    try {
      for (Map.Entry<UK, UV> e : map.entrySet()) {
        batchKeys.write(keyOut.getSharedBuffer(), 0, prefixLength);
        userKeySerializer.serialize(e.getKey(), batchKeys);
        UV value = e.getValue();
        batchValues.writeBoolean(value == null);
        if (value != null) {
          userValueSerializer.serialize(value, batchValues);
        }
        batchKeyEnds[count] = batchKeys.length();
        batchValueEnds[count] = batchValues.length();
        if (++count == BATCH) {
          writeBatch(count);
          count = 0;
        }
      }
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot serialize an entry of " + family, e);
    }
    if (count > 0) {
      writeBatch(count);
    }
  }

  private void writeBatch(int count) {
    db.putColumns(
        bucket(),
        family,
        0,
        batchKeys.getSharedBuffer(),
        batchKeyEnds,
        batchValues.getSharedBuffer(),
        batchValueEnds,
        count);
    batchKeys.clear();
    batchValues.clear();
  }

  @Override
  public void remove(UK key) {
    db.deleteRow(bucket(), family, entryKey(key));
  }

  @Override
  public boolean contains(UK key) {
    return db.readColumn(bucket(), family, entryKey(key), 0, IGNORE);
  }

  @Override
  public Iterable<Map.Entry<UK, UV>> entries() {
    return entriesView;
  }

  @Override
  public Iterable<UK> keys() {
    return keysView;
  }

  @Override
  public Iterable<UV> values() {
    return valuesView;
  }

  @Override
  public Iterator<Map.Entry<UK, UV>> iterator() {
    writePrefix(currentNamespace);
    return new EntryIterator(bucket(), keyOut.getCopyOfBuffer());
  }

  @Override
  public boolean isEmpty() {
    writePrefix(currentNamespace);
    return db.isEmptyWithPrefix(bucket(), family, keyOut.getSharedBuffer(), keyOut.length());
  }

  @Override
  public void clear() {
    writePrefix(currentNamespace);
    byte[] prefix = keyOut.getCopyOfBuffer();
    int bucket = bucket();
    byte[] after = null;
    while (true) {
      List<byte[]> keys = new ArrayList<>();
      ScanOptions options = ScanOptions.defaults().maxRows(CHUNK).startAfter(after);
      try (ScanCursor c = db.scanPrefix(bucket, family, prefix, options)) {
        while (c.hasNext()) {
          keys.add(c.next().key());
        }
      }
      for (byte[] k : keys) {
        db.deleteRow(bucket, family, k);
      }
      if (keys.size() < CHUNK) {
        return;
      }
      after = keys.get(keys.size() - 1);
    }
  }

  @Override
  byte[] serializedValue(int keyGroup, byte[] prefix) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(128);
    boolean any = false;
    try (ScanCursor c = db.scanPrefix(keyGroup, family, prefix, ScanOptions.defaults())) {
      while (c.hasNext()) {
        Row row = c.next();
        byte[] key = row.key();
        // Flink's KvStateSerializer.deserializeMap format: user key, null flag, value.
        out.write(key, prefix.length, key.length - prefix.length);
        out.write(row.column(0));
        any = true;
      }
    }
    return any ? out.getCopyOfBuffer() : null;
  }

  /**
   * What an iterator copies its chunks into, primitive arrays only: the rows' user keys (row keys
   * after the prefix) back to back, the i-th ending at {@code keyEnds[i]}, and likewise their
   * values. An iterator that has handed out its last element leaves them to the state's next
   * iterator, so a short iteration allocates none of them, and a reused array never holds a
   * reference to a younger object.
   */
  private static final class ChunkBuffers {
    // Arrays grown past this are not kept for the next iterator.
    static final int KEEP_MAX = 64 << 10;

    final DataInputDeserializer input = new DataInputDeserializer();
    byte[] keys = new byte[128];
    int[] keyEnds = new int[16];
    byte[] values = new byte[128];
    int[] valueEnds = new int[16];

    boolean small() {
      return keys.length <= KEEP_MAX && values.length <= KEEP_MAX;
    }
  }

  // Buffers an exhausted iterator left; taken by the next one (iterators of a backend run on its
  // task thread).
  private ChunkBuffers spareBuffers;

  /**
   * The rows of one (key, namespace), read {@link #CHUNK} rows at a time. A chunk's keys and values
   * are copied out of the scan's buffers (a memtable page or a cached block) and the cursor closed
   * before the first element is handed out, so an abandoned iterator holds no engine resources;
   * each element is decoded from the copies as {@link #next} hands it out. {@link #remove} deletes
   * the row of the last element.
   */
  private abstract class RowIterator<T> implements Iterator<T> {
    final int bucket;
    final byte[] prefix;
    // Null once the iterator has handed out its last element and left them to the state.
    private ChunkBuffers buffers;
    private int size;
    private int index;
    private byte[] after;
    private boolean exhausted;
    // The last element handed out and its index in the chunk (-1 before next() and once removed);
    // when the chunk is reread or the buffers left before a remove, its row key is kept in
    // savedRowKey instead.
    private T last;
    private int lastIndex = -1;
    private byte[] savedRowKey;

    RowIterator(int bucket, byte[] prefix) {
      this.bucket = bucket;
      this.prefix = prefix;
      this.buffers = spareBuffers != null ? spareBuffers : new ChunkBuffers();
      spareBuffers = null;
    }

    /** The element of one row, decoded from its user key and value. */
    abstract T element(
        byte[] key, int keyOff, int keyLen, byte[] value, int valueOff, int valueLen);

    /** Whether {@link #element} reads the value: if not, values are not copied. */
    boolean readsValues() {
      return true;
    }

    /** Called after the row of {@code element}, the last one handed out, was deleted. */
    void removed(T element) {}

    @Override
    public final boolean hasNext() {
      if (index < size) {
        return true;
      }
      if (buffers == null) {
        return false;
      }
      if (!exhausted) {
        readChunk();
        if (size > 0) {
          return true;
        }
      }
      leaveBuffers();
      return false;
    }

    /** Hands the buffers to the state's next iterator, keeping what a later remove() needs. */
    private void leaveBuffers() {
      saveLastRowKey();
      if (buffers.small()) {
        spareBuffers = buffers;
      }
      buffers = null;
    }

    /** Keeps the last element's row key before the buffers it lies in are refilled or left. */
    private void saveLastRowKey() {
      if (lastIndex >= 0) {
        savedRowKey = rowKeyAt(lastIndex);
        lastIndex = -1;
      }
    }

    private void readChunk() {
      saveLastRowKey();
      ChunkBuffers b = buffers;
      boolean withValues = readsValues();
      size = 0;
      index = 0;
      int keyBytes = 0;
      int valueBytes = 0;
      ScanOptions options = after == null ? FIRST_CHUNK : FIRST_CHUNK.startAfter(after);
      try (ScanCursor c = db.scanPrefix(bucket, family, prefix, options)) {
        while (c.advance()) {
          if (b.keyEnds.length == size) {
            b.keyEnds = Arrays.copyOf(b.keyEnds, 2 * size);
            b.valueEnds = Arrays.copyOf(b.valueEnds, 2 * size);
          }
          int keyLen = c.keyLength() - prefix.length;
          b.keys = fit(b.keys, keyBytes + keyLen);
          System.arraycopy(c.keyArray(), c.keyOffset() + prefix.length, b.keys, keyBytes, keyLen);
          keyBytes += keyLen;
          b.keyEnds[size] = keyBytes;
          if (withValues) {
            int valueLen = c.valueLength(0);
            b.values = fit(b.values, valueBytes + valueLen);
            System.arraycopy(c.valueArray(0), c.valueOffset(0), b.values, valueBytes, valueLen);
            valueBytes += valueLen;
            b.valueEnds[size] = valueBytes;
          }
          size++;
        }
      }
      if (size < CHUNK) {
        exhausted = true;
      } else {
        after = rowKeyAt(CHUNK - 1);
      }
    }

    /** The row key of the chunk's {@code i}-th element: the prefix, then its user key. */
    private byte[] rowKeyAt(int i) {
      int[] keyEnds = buffers.keyEnds;
      int from = i == 0 ? 0 : keyEnds[i - 1];
      byte[] rowKey = Arrays.copyOf(prefix, prefix.length + keyEnds[i] - from);
      System.arraycopy(buffers.keys, from, rowKey, prefix.length, keyEnds[i] - from);
      return rowKey;
    }

    @Override
    public final T next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      ChunkBuffers b = buffers;
      int i = index++;
      int keyFrom = i == 0 ? 0 : b.keyEnds[i - 1];
      int valueFrom = i == 0 ? 0 : b.valueEnds[i - 1];
      last =
          element(
              b.keys,
              keyFrom,
              b.keyEnds[i] - keyFrom,
              b.values,
              valueFrom,
              b.valueEnds[i] - valueFrom);
      savedRowKey = null;
      lastIndex = i;
      return last;
    }

    @Override
    public final void remove() {
      byte[] rowKey = lastIndex >= 0 ? rowKeyAt(lastIndex) : savedRowKey;
      if (rowKey == null) {
        throw new IllegalStateException("next() was not called, or the entry is removed");
      }
      db.deleteRow(bucket, family, rowKey);
      lastIndex = -1;
      savedRowKey = null;
      removed(last);
    }

    private byte[] fit(byte[] array, int length) {
      return array.length >= length
          ? array
          : Arrays.copyOf(array, Math.max(2 * array.length, length));
    }

    UK decodeKey(byte[] buf, int off, int len) {
      try {
        DataInputDeserializer input = buffers.input;
        input.setBuffer(buf, off, len);
        return userKeySerializer.deserialize(input);
      } catch (IOException e) {
        throw new FlinkRuntimeException("cannot deserialize a user key of " + family, e);
      }
    }

    UV decodeValue(byte[] buf, int off, int len) {
      try {
        DataInputDeserializer input = buffers.input;
        input.setBuffer(buf, off, len);
        return input.readBoolean() ? null : userValueSerializer.deserialize(input);
      } catch (IOException e) {
        throw new FlinkRuntimeException("cannot deserialize a value of " + family, e);
      }
    }

    /** The row key of {@code userKey} under this iterator's prefix. */
    byte[] rowKey(UK userKey) {
      try {
        DataOutputSerializer out = new DataOutputSerializer(prefix.length + 16);
        out.write(prefix);
        userKeySerializer.serialize(userKey, out);
        return out.getCopyOfBuffer();
      } catch (IOException e) {
        throw new FlinkRuntimeException("cannot serialize a user key of " + family, e);
      }
    }
  }

  /** Only the user keys: values are never decoded. */
  private final class KeyIterator extends RowIterator<UK> {
    KeyIterator(int bucket, byte[] prefix) {
      super(bucket, prefix);
    }

    @Override
    UK element(byte[] key, int keyOff, int keyLen, byte[] value, int valueOff, int valueLen) {
      return decodeKey(key, keyOff, keyLen);
    }

    @Override
    boolean readsValues() {
      return false;
    }
  }

  /** Only the values: user keys are never decoded. */
  private final class ValueIterator extends RowIterator<UV> {
    ValueIterator(int bucket, byte[] prefix) {
      super(bucket, prefix);
    }

    @Override
    UV element(byte[] key, int keyOff, int keyLen, byte[] value, int valueOff, int valueLen) {
      return decodeValue(value, valueOff, valueLen);
    }
  }

  /**
   * Entries holding their decoded key and value, as the heap backend's do: the only objects an
   * element allocates besides what the serializers create. {@link Entry#setValue} writes the row of
   * the entry's key, serialized again.
   */
  private final class EntryIterator extends RowIterator<Map.Entry<UK, UV>> {
    EntryIterator(int bucket, byte[] prefix) {
      super(bucket, prefix);
    }

    @Override
    Map.Entry<UK, UV> element(
        byte[] key, int keyOff, int keyLen, byte[] value, int valueOff, int valueLen) {
      return new Entry(decodeKey(key, keyOff, keyLen), decodeValue(value, valueOff, valueLen));
    }

    @Override
    void removed(Map.Entry<UK, UV> entry) {
      ((Entry) entry).removed = true;
    }

    private final class Entry implements Map.Entry<UK, UV> {
      private final UK key;
      private UV value;
      boolean removed;

      Entry(UK key, UV value) {
        this.key = key;
        this.value = value;
      }

      @Override
      public UK getKey() {
        return key;
      }

      @Override
      public UV getValue() {
        return removed ? null : value;
      }

      @Override
      public UV setValue(UV newValue) {
        if (removed) {
          throw new IllegalStateException("The entry has been removed");
        }
        UV old = value;
        db.put(bucket, family, rowKey(key), 0, encodeValue(newValue));
        value = newValue;
        return old;
      }

      @Override
      public boolean equals(Object o) {
        if (!(o instanceof Map.Entry)) {
          return false;
        }
        Map.Entry<?, ?> e = (Map.Entry<?, ?>) o;
        return java.util.Objects.equals(getKey(), e.getKey())
            && java.util.Objects.equals(getValue(), e.getValue());
      }

      @Override
      public int hashCode() {
        return java.util.Objects.hashCode(getKey()) ^ java.util.Objects.hashCode(getValue());
      }

      @Override
      public String toString() {
        return getKey() + "=" + getValue();
      }
    }
  }
}
