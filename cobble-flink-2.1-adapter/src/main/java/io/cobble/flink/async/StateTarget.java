package io.cobble.flink.async;

import io.cobble.flink.state.StateRowReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.asyncprocessing.StateRequestType;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalReducingState;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.apache.flink.runtime.state.v2.adaptor.CompleteStateIterator;

/**
 * What serves the requests of one asynchronous state: the synchronous Cobble state of the same name
 * (same rows, same checkpoints; TTL through Flink's synchronous TTL decorators), and for states
 * without TTL the factory of readers of single rows that other threads use, one reader each.
 */
final class StateTarget {

  /** Wrapped by Flink's TTL or latency decorators when configured; used on the apply thread. */
  private final InternalKvState<Object, Object, ?> state;

  /** Null when point reads must go through {@link #state} (TTL: expiry is in the decorator). */
  private final StateRowReader.Factory<Object, Object> readers;

  /** Requests without a namespace of their own use it. */
  private final Object defaultNamespace;

  /** Copy the payloads on the task thread; null for the parts a state does not have. */
  private final TypeSerializer<Object> userKeys;

  private final TypeSerializer<Object> values;

  @SuppressWarnings("unchecked")
  StateTarget(
      InternalKvState<?, ?, ?> state,
      StateRowReader.Factory<?, ?> readers,
      Object defaultNamespace,
      TypeSerializer<?> userKeys,
      TypeSerializer<?> values) {
    this.state = (InternalKvState<Object, Object, ?>) state;
    this.readers = (StateRowReader.Factory<Object, Object>) readers;
    this.defaultNamespace = defaultNamespace;
    this.userKeys = userKeys == null ? null : (TypeSerializer<Object>) userKeys.duplicate();
    this.values = (TypeSerializer<Object>) values.duplicate();
  }

  /**
   * A copy of a request's payload, taken on the task thread when the request joins a batch: the
   * operator may reuse the objects it passed once the request is queued, while the request runs
   * later on another thread.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  Object copyPayload(StateRequestType type, Object payload) {
    if (payload == null) {
      return null;
    }
    switch (type) {
      case VALUE_UPDATE:
      case LIST_ADD:
      case REDUCING_ADD:
      case AGGREGATING_ADD:
        return values.copy(payload);
      case LIST_UPDATE:
      case LIST_ADD_ALL:
        List<Object> list = new ArrayList<>(((List<Object>) payload).size());
        for (Object o : (List<Object>) payload) {
          list.add(o == null ? null : values.copy(o));
        }
        return list;
      case MAP_GET:
      case MAP_CONTAINS:
      case MAP_REMOVE:
        return userKeys.copy(payload);
      case MAP_PUT:
        Tuple2<Object, Object> entry = (Tuple2<Object, Object>) payload;
        return Tuple2.of(userKeys.copy(entry.f0), entry.f1 == null ? null : values.copy(entry.f1));
      case MAP_PUT_ALL:
        Map<Object, Object> map = new java.util.LinkedHashMap<>();
        ((Map<Object, Object>) payload)
            .forEach((k, v) -> map.put(userKeys.copy(k), v == null ? null : values.copy(v)));
        return map;
      default:
        return payload;
    }
  }

  Object namespace(PendingRequest request) {
    Object namespace = request.namespace();
    return namespace == null ? defaultNamespace : namespace;
  }

  /** A reader of this state's rows for the calling thread alone. */
  StateRowReader<Object, Object> newReader() {
    return readers.newReader();
  }

  /** Whether {@code type} reads one row that a reader of {@link #readers} can serve. */
  boolean isPointRead(StateRequestType type) {
    if (readers == null) {
      return false;
    }
    switch (type) {
      case VALUE_GET:
      case REDUCING_GET:
      case AGGREGATING_GET:
        return !readers.isMap();
      case MAP_GET:
      case MAP_CONTAINS:
        return readers.isMap();
      default:
        return false;
    }
  }

  /** Applies a request to the synchronous state; the backend's current key is already set. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  Object apply(StateRequestType type, Object namespace, Object payload) throws Exception {
    state.setCurrentNamespace(namespace);
    switch (type) {
      case CLEAR:
        state.clear();
        return null;
      case VALUE_GET:
        return ((InternalValueState) state).value();
      case VALUE_UPDATE:
        ((InternalValueState) state).update(payload);
        return null;
      case LIST_GET:
        return new CompleteStateIterator<>(
            copy((Iterable<Object>) ((InternalListState) state).get()));
      case LIST_ADD:
        ((InternalListState) state).add(payload);
        return null;
      case LIST_UPDATE:
        ((InternalListState) state).update((List) payload);
        return null;
      case LIST_ADD_ALL:
        ((InternalListState) state).addAll((List) payload);
        return null;
      case MAP_GET:
        return ((InternalMapState) state).get(payload);
      case MAP_CONTAINS:
        return ((InternalMapState) state).contains(payload);
      case MAP_PUT:
        Tuple2<Object, Object> entry = (Tuple2<Object, Object>) payload;
        ((InternalMapState) state).put(entry.f0, entry.f1);
        return null;
      case MAP_PUT_ALL:
        ((InternalMapState) state).putAll((Map) payload);
        return null;
      case MAP_REMOVE:
        ((InternalMapState) state).remove(payload);
        return null;
      case MAP_ITER:
        return new CompleteStateIterator<>(entries((InternalMapState) state));
      case MAP_ITER_KEY:
        return new CompleteStateIterator<>(copy(((InternalMapState) state).keys()));
      case MAP_ITER_VALUE:
        return new CompleteStateIterator<>(copy(((InternalMapState) state).values()));
      case MAP_IS_EMPTY:
        return ((InternalMapState) state).isEmpty();
      case REDUCING_GET:
        return ((InternalReducingState) state).getInternal();
      case REDUCING_ADD:
        ((InternalReducingState) state).updateInternal(payload);
        return null;
      case AGGREGATING_GET:
        return ((InternalAggregatingState) state).getInternal();
      case AGGREGATING_ADD:
        ((InternalAggregatingState) state).updateInternal(payload);
        return null;
      default:
        throw new UnsupportedOperationException(
            "The Cobble state backend does not serve " + type + " requests");
    }
  }

  /**
   * The result of a point read of {@code raw}, the stored value of the request's row, decoded by
   * the calling thread's own {@code reader}: a reader's deserializer and buffer are not shared
   * between read threads (sharing them returned other rows' bytes and EOFs under load).
   */
  Object pointResult(StateRequestType type, byte[] raw, StateRowReader<Object, Object> threadReader)
      throws Exception {
    if (type == StateRequestType.MAP_CONTAINS) {
      return raw != null;
    }
    return threadReader.decode(raw);
  }

  /** Rows are read lazily by the synchronous state; a request's result is a snapshot. */
  private static <T> List<T> copy(Iterable<T> items) {
    List<T> list = new ArrayList<>();
    if (items != null) {
      items.forEach(list::add);
    }
    return list;
  }

  private static List<Map.Entry<Object, Object>> entries(InternalMapState<?, ?, Object, Object> s)
      throws Exception {
    List<Map.Entry<Object, Object>> list = new ArrayList<>();
    Iterable<Map.Entry<Object, Object>> it = s.entries();
    if (it != null) {
      for (Map.Entry<Object, Object> e : it) {
        list.add(new java.util.AbstractMap.SimpleImmutableEntry<>(e.getKey(), e.getValue()));
      }
    }
    return list;
  }
}
