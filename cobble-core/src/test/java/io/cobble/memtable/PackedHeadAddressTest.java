package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * The vec index's bucket heads carry their record's address in 32 bits when it fits: every address
 * of the first 1,024 arena pages comes back exactly (with its replaces-older flag), and any other
 * packs to 0, which sends the get down the chain walk instead of to a wrong record.
 */
class PackedHeadAddressTest {
  @Test
  void addressesRoundTripOrDoNotPack() {
    long[] pages = {0, 1, 2, 511, 1023};
    long[] offsets = {0, 1, 4096, (1 << 20) - 1};
    for (long page : pages) {
      for (long offset : offsets) {
        for (boolean replaces : new boolean[] {false, true}) {
          long addr = page << 32 | offset | (replaces ? Arena.REPLACES_OLDER : 0);
          int packed = VecMemTable.packAddress(addr);
          assertEquals(
              addr, VecMemTable.unpackAddress(packed), "page " + page + " offset " + offset);
        }
      }
    }
    assertEquals(0, VecMemTable.packAddress(1024L << 32));
    assertEquals(0, VecMemTable.packAddress(5000L << 32 | 17 | Arena.REPLACES_OLDER));
    assertEquals(0, VecMemTable.packAddress(1L << 20));
    assertEquals(Arena.NONE, VecMemTable.unpackAddress(0));
  }
}
