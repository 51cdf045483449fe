package io.cobble.vlog;

/** A value-log file as the manifest records it: number, size and how many values it holds. */
public final class ValueLogFile {
  private final long number;
  private final long size;
  private final long entries;

  public ValueLogFile(long number, long size, long entries) {
    this.number = number;
    this.size = size;
    this.entries = entries;
  }

  public long number() {
    return number;
  }

  public long size() {
    return size;
  }

  public long entries() {
    return entries;
  }
}
