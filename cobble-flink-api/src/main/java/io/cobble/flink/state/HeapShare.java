package io.cobble.flink.state;

import org.apache.flink.configuration.TaskManagerOptions;

/**
 * The part of the TaskManager's JVM heap one slot's Cobble memory pool may take. Cobble is pure
 * Java: its memtables and block cache are heap arrays, also when their budget is reserved from
 * Flink's managed memory (the reservation keeps other managed-memory users from counting on those
 * bytes, but Flink sizes managed memory outside the heap). So the pools of all slots together are
 * held to half of the heap, leaving the rest to Flink, the operators and their records.
 */
final class HeapShare {
  private static final double HEAP_FRACTION = 0.5;

  private final long maxHeapBytes;
  private final int slots;

  HeapShare(long maxHeapBytes, int slots) {
    this.maxHeapBytes = maxHeapBytes;
    this.slots = slots;
  }

  /** This JVM's heap, shared by {@code slots} slots. */
  static HeapShare ofThisJvm(int slots) {
    return new HeapShare(Runtime.getRuntime().maxMemory(), slots);
  }

  /** Bytes one slot's pool may hold. */
  long perSlotBytes() {
    return (long) (maxHeapBytes * HEAP_FRACTION / slots);
  }

  /** How the share was computed, for messages that must let a user act on it. */
  String explain() {
    return "Cobble keeps its memtables and block cache on the JVM heap, and the pools of all slots"
        + " together may take half of it: half of the "
        + mib(maxHeapBytes)
        + " heap over "
        + slots
        + " slot(s) ("
        + TaskManagerOptions.NUM_TASK_SLOTS.key()
        + ") is "
        + mib(perSlotBytes())
        + " per slot";
  }

  static String mib(long bytes) {
    return bytes < 1L << 20 ? bytes + " bytes" : (bytes >> 20) + " MiB";
  }
}
