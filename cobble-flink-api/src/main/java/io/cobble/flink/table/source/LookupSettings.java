package io.cobble.flink.table.source;

import java.io.Serializable;

/** How lookup joins read: sync on the task thread, or async with a bound on reads in flight. */
public final class LookupSettings implements Serializable {

  private static final long serialVersionUID = 1L;

  private final boolean async;
  private final int maxInFlight;

  /**
   * @param async whether the planner gets an async lookup function
   * @param maxInFlight the most point reads one async lookup subtask runs at once; > 0
   */
  public LookupSettings(boolean async, int maxInFlight) {
    if (maxInFlight <= 0) {
      throw new IllegalArgumentException("maxInFlight must be > 0, got " + maxInFlight);
    }
    this.async = async;
    this.maxInFlight = maxInFlight;
  }

  public boolean async() {
    return async;
  }

  public int maxInFlight() {
    return maxInFlight;
  }
}
