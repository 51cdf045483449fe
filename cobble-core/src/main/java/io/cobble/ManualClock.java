package io.cobble;

/** A clock that only moves when told to; time never goes backwards so expiry stays monotone. */
public final class ManualClock implements Clock {
  private volatile long now;

  public ManualClock(long startMillis) {
    this.now = startMillis;
  }

  @Override
  public long nowMillis() {
    return now;
  }

  public synchronized void advance(long millis) {
    if (millis < 0) {
      throw new IllegalArgumentException("cannot move the clock backwards by " + millis + " ms");
    }
    now += millis;
  }
}
