package io.cobble.flink.async;

import org.apache.flink.runtime.asyncprocessing.StateRequestType;

/**
 * One state request as {@link AsyncStateRunner} needs it. Each Flink line wraps its own {@code
 * StateRequest}: the type of its future changed in Flink 2.1.
 */
public interface PendingRequest {

  StateRequestType type();

  /** The state object of the request: one the backend created. */
  Object state();

  Object payload();

  Object key();

  int keyGroup();

  Object namespace();

  void complete(Object result);

  void fail(String message, Throwable cause);
}
