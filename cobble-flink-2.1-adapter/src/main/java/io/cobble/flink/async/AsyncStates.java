package io.cobble.flink.async;

import io.cobble.flink.state.StateRowReader;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.runtime.state.internal.InternalKvState;

/**
 * The asynchronous states of one keyed backend and what serves each: shared by every executor the
 * backend creates. Registered on the task thread, read on the executors' threads.
 */
public final class AsyncStates {

  private final Map<Object, StateTarget> targets = new ConcurrentHashMap<>();

  /**
   * Registers the synchronous state that serves {@code asyncState}, and a reader of its rows for
   * parallel point reads (null to serve every request through {@code syncState}).
   */
  public void register(
      Object asyncState,
      InternalKvState<?, ?, ?> syncState,
      StateRowReader<?, ?> reader,
      Object defaultNamespace) {
    targets.put(asyncState, new StateTarget(syncState, reader, defaultNamespace));
  }

  StateTarget get(Object asyncState) {
    return targets.get(asyncState);
  }
}
