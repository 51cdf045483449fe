package io.cobble.read;

import java.lang.management.ManagementFactory;

/** Bytes the calling thread allocates, from the JVM's per-thread allocation counter. */
public final class AllocationProbe {
  private AllocationProbe() {}

  /**
   * Bytes this thread allocated in the second of two runs of {@code work}, less the probe's own:
   * the first run pays class loading, lazy buffers and compilation.
   */
  public static long allocatedBy(Runnable work) {
    work.run();
    long probe = -allocated() + allocated();
    long before = allocated();
    work.run();
    return allocated() - before - probe;
  }

  private static long allocated() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
        .getThreadAllocatedBytes(Thread.currentThread().getId());
  }
}
