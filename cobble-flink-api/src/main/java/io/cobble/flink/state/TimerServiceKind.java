package io.cobble.flink.state;

/** Where the backend keeps timers and other priority queues. */
public enum TimerServiceKind {
  /** In Cobble, per key group, with a small in-memory head cache; checkpointed with the state. */
  COBBLE,
  /** On the JVM heap, as Flink's heap backend does; written in full at every checkpoint. */
  HEAP
}
