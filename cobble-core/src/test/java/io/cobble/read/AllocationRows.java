package io.cobble.read;

import java.util.Random;

/** The rows the read allocation tests store: 11-byte keys and 100-byte random values. */
final class AllocationRows {
  static final int VALUE = 100;

  private AllocationRows() {}

  static byte[] key(int i) {
    return String.format("key%08d", i).getBytes();
  }

  static byte[] value(int i) {
    byte[] v = new byte[VALUE];
    new Random(i).nextBytes(v);
    return v;
  }
}
