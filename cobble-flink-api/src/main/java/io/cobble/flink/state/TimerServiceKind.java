package io.cobble.flink.state;

/** Where timers and other priority queues of a keyed backend live. */
public enum TimerServiceKind {
  /** In Cobble, one queue per key group with an in-memory head cache; part of every snapshot. */
  COBBLE,
  /** On the heap (Flink's heap queues); written into raw keyed state at checkpoints. */
  HEAP
}
