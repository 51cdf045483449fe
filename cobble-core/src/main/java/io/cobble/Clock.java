package io.cobble;

/** Source of "now" in epoch milliseconds for TTL; tests swap in a {@link ManualClock}. */
public interface Clock {
  Clock SYSTEM = System::currentTimeMillis;

  long nowMillis();
}
