package io.cobble.flink.state;

import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Arrays of an exact length, one reused per length: the engine's calls take whole arrays as keys
 * and values but copy them before returning (into the memtable arena or the read's own buffer), so
 * a state can hand it the same array on every operation instead of a fresh copy. An array stays
 * valid until the next {@link #of} of the same length; longer contents get a fresh array.
 */
final class ExactArrays {
  private final byte[][] byLength;

  ExactArrays(int maxReusedLength) {
    this.byLength = new byte[maxReusedLength + 1][];
  }

  /** The serializer's contents in an array of exactly their length. */
  byte[] of(DataOutputSerializer out) {
    int len = out.length();
    byte[] a;
    if (len >= byLength.length) {
      a = new byte[len];
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
