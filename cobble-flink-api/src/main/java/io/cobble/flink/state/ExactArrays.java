package io.cobble.flink.state;

import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Arrays of an exact length, one reused per length: the engine's calls take whole arrays as keys
 * and values but copy them before returning (into the memtable arena or the read's own buffer), so
 * a state can hand it the same array on every operation instead of a fresh copy. An array stays
 * valid until the next {@link #of} of the same length. Longer contents get a fresh array, unless
 * {@code keepLastLong}: then the last longer array up to {@link #MAX_KEPT_LONG} bytes is reused
 * too, so a batch written over and over (a list's {@code addAll} of a fixed-size batch) reuses one
 * array; keeping more, or larger, would hold on to arrays of one-off sizes.
 */
final class ExactArrays {
  private final byte[][] byLength;
  static final int MAX_KEPT_LONG = 64 * 1024;
  private final boolean keepLastLong;
  private byte[] lastLong = new byte[0];

  ExactArrays(int maxReusedLength, boolean keepLastLong) {
    this.byLength = new byte[maxReusedLength + 1][];
    this.keepLastLong = keepLastLong;
  }

  /** The serializer's contents in an array of exactly their length. */
  byte[] of(DataOutputSerializer out) {
    int len = out.length();
    byte[] a;
    if (len >= byLength.length) {
      a = lastLong;
      if (a.length != len) {
        a = new byte[len];
        if (keepLastLong && len <= MAX_KEPT_LONG) {
          lastLong = a;
        }
      }
    } else {
      a = byLength[len];
      if (a == null) {
        a = new byte[len];
        byLength[len] = a;
      }
    }
    System.arraycopy(out.getSharedBuffer(), 0, a, 0, len);
    return a;
  }
}
