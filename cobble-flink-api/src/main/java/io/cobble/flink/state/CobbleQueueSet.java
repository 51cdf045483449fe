package io.cobble.flink.state;

import io.cobble.Db;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.InternalPriorityQueue;
import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.PriorityComparator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.KeyGroupPartitionedPriorityQueue;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.FlinkRuntimeException;

/**
 * The elements of one priority queue in one key group, stored in Cobble as one row per element (the
 * key is the element serialized with its byte-ordered serializer, so key order is priority order).
 * The smallest elements are cached in memory; {@link #complete} says whether the cache holds all of
 * them, so most operations touch Cobble only to write.
 */
final class CobbleQueueSet<T> implements InternalPriorityQueue<T>, HeapPriorityQueueElement {

  private static final byte[] EMPTY = new byte[0];

  private final Db db;
  private final String family;
  private final int keyGroup;
  private final TypeSerializer<T> serializer;
  private final int capacity;
  private final TreeMap<byte[], T> cache = new TreeMap<>(CobbleKeyedStateCore.unsignedOrder());
  private final DataOutputSerializer out = new DataOutputSerializer(32);
  private final DataInputDeserializer in = new DataInputDeserializer();
  private boolean complete;
  private boolean loaded;
  private int size = -1;
  private int internalIndex = HeapPriorityQueueElement.NOT_CONTAINED;

  CobbleQueueSet(Db db, String family, int keyGroup, TypeSerializer<T> serializer, int capacity) {
    this.db = db;
    this.family = family;
    this.keyGroup = keyGroup;
    this.serializer = serializer;
    this.capacity = capacity;
  }

  /** A queue over all key groups of the backend, one {@link CobbleQueueSet} per key group. */
  static <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
      KeyGroupedInternalPriorityQueue<T> partitioned(
          CobbleKeyedStateCore<?> core, String family, TypeSerializer<T> serializer) {
    // One copy of the serializer per queue: serializers need not be thread-safe.
    TypeSerializer<T> ser = serializer.duplicate();
    KeyGroupPartitionedPriorityQueue.PartitionQueueSetFactory<T, CobbleQueueSet<T>> sets =
        (keyGroupId, numKeyGroups, keyExtractor, comparator) ->
            new CobbleQueueSet<>(
                core.db, family, keyGroupId, ser, CobbleKeyedStateCore.QUEUE_CACHE_SIZE);
    KeyExtractorFunction<T> keyExtractor = KeyExtractorFunction.forKeyedObjects();
    PriorityComparator<T> comparator = PriorityComparator.forPriorityComparableObjects();
    return new KeyGroupPartitionedPriorityQueue<T, CobbleQueueSet<T>>(
        keyExtractor, comparator, sets, core.keyGroupRange, core.numberOfKeyGroups);
  }

  private byte[] bytes(T element) {
    try {
      out.clear();
      serializer.serialize(element, out);
      return out.getCopyOfBuffer();
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot serialize a queue element of " + family, e);
    }
  }

  private T element(byte[] bytes) {
    try {
      in.setBuffer(bytes);
      return serializer.deserialize(in);
    } catch (IOException e) {
      throw new FlinkRuntimeException("cannot deserialize a queue element of " + family, e);
    }
  }

  /** Fills an empty cache with the smallest stored elements. */
  private void load() {
    if (loaded && (!cache.isEmpty() || complete)) {
      return;
    }
    cache.clear();
    int n = 0;
    try (ScanCursor c =
        db.scan(keyGroup, family, null, null, ScanOptions.defaults().maxRows(capacity))) {
      while (c.hasNext()) {
        byte[] key = c.next().key();
        cache.put(key, element(key));
        n++;
      }
    }
    complete = n < capacity;
    loaded = true;
  }

  private int countStored() {
    int n = 0;
    try (ScanCursor c = db.scan(keyGroup, family, null, null, ScanOptions.defaults())) {
      while (c.hasNext()) {
        c.next();
        n++;
      }
    }
    return n;
  }

  @Override
  public T poll() {
    load();
    Map.Entry<byte[], T> first = cache.pollFirstEntry();
    if (first == null) {
      return null;
    }
    db.deleteRow(keyGroup, family, first.getKey());
    if (size > 0) {
      size--;
    }
    return first.getValue();
  }

  @Override
  public T peek() {
    load();
    return cache.isEmpty() ? null : cache.firstEntry().getValue();
  }

  @Override
  public boolean add(T element) {
    load();
    byte[] key = bytes(element);
    if (cache.containsKey(key)) {
      return false;
    }
    boolean belowCached = cache.isEmpty() || compare(key, cache.lastKey()) < 0;
    if (!complete && !belowCached && db.get(keyGroup, family, key) != null) {
      return false;
    }
    db.put(keyGroup, family, key, 0, EMPTY);
    if (size >= 0) {
      size++;
    }
    if (complete || belowCached) {
      cache.put(key, element);
      if (cache.size() > capacity) {
        cache.pollLastEntry();
        complete = false;
      }
    }
    return cache.isEmpty() || compare(cache.firstKey(), key) == 0;
  }

  @Override
  public boolean remove(T element) {
    load();
    byte[] key = bytes(element);
    boolean wasHead = !cache.isEmpty() && compare(cache.firstKey(), key) == 0;
    boolean present = cache.remove(key) != null;
    if (!present && !complete) {
      present = db.get(keyGroup, family, key) != null;
    }
    if (!present) {
      return false;
    }
    db.deleteRow(keyGroup, family, key);
    if (size > 0) {
      size--;
    }
    return wasHead;
  }

  private static int compare(byte[] a, byte[] b) {
    return java.util.Arrays.compareUnsigned(a, b);
  }

  @Override
  public boolean isEmpty() {
    return peek() == null;
  }

  @Override
  public int size() {
    if (size < 0) {
      size = countStored();
    }
    return size;
  }

  @Override
  public void addAll(Collection<? extends T> elements) {
    if (elements != null) {
      for (T e : elements) {
        add(e);
      }
    }
  }

  @Override
  public CloseableIterator<T> iterator() {
    List<T> all = new ArrayList<>();
    try (ScanCursor c = db.scan(keyGroup, family, null, null, ScanOptions.defaults())) {
      while (c.hasNext()) {
        Row row = c.next();
        all.add(element(row.key()));
      }
    }
    return CloseableIterator.adapterForIterator(all.iterator());
  }

  @Override
  public int getInternalIndex() {
    return internalIndex;
  }

  @Override
  public void setInternalIndex(int newIndex) {
    this.internalIndex = newIndex;
  }
}
