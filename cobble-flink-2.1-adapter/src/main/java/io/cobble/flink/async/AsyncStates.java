package io.cobble.flink.async;

import io.cobble.flink.state.StateRowReader;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.asyncprocessing.StateRequestType;
import org.apache.flink.runtime.state.internal.InternalKvState;

/**
 * The asynchronous states of one keyed backend and what serves each: shared by every executor the
 * backend creates. Registered on the task thread, read on the executors' threads.
 */
public final class AsyncStates {

  private final Map<Object, StateTarget> targets = new ConcurrentHashMap<>();

  /**
   * Registers the synchronous state that serves {@code asyncState}, and the readers of its rows for
   * parallel point reads (null to serve every request through {@code syncState}), and the user
   * serializers of its map keys (null unless map state) and values (list elements for lists).
   */
  public void register(
      Object asyncState,
      InternalKvState<?, ?, ?> syncState,
      StateRowReader.Factory<?, ?> readers,
      Object defaultNamespace,
      TypeSerializer<?> userKeys,
      TypeSerializer<?> values) {
    targets.put(
        asyncState, new StateTarget(syncState, readers, defaultNamespace, userKeys, values));
  }

  /**
   * A copy of a request's payload the executor keeps; call on the task thread as the request joins
   * a batch.
   */
  public Object stablePayload(Object asyncState, StateRequestType type, Object payload) {
    StateTarget target = asyncState == null ? null : targets.get(asyncState);
    return target == null ? payload : target.copyPayload(type, payload);
  }

  StateTarget get(Object asyncState) {
    return targets.get(asyncState);
  }
}
