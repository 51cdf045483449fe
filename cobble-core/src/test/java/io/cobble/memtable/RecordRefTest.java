package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A vec index reference keeps its record's number whole, and the address with its replaces-older
 * flag exactly on the pages it carries; past them it carries none (the get then reads the address
 * array) rather than a wrong one. Its tag never rules out the key's own hash.
 */
class RecordRefTest {
  private static final int[] NUMBERS = {1, 2, 1 << 20, (1 << 30) + 7, Integer.MAX_VALUE};
  private static final int[] HASHES = {0, 1, -1, 0x7fffffff, 0x80000000, 0x9747b28c, 0x0800_0000};

  @Test
  void carriedAddressesAndNumbersRoundTrip() {
    long[] pages = {0, 1, 6, RecordRef.CARRIED_PAGES / 2, RecordRef.CARRIED_PAGES - 1};
    long[] offsets = {0, 1, 4096, Arena.MAX_PAGE_SIZE - 1};
    for (int number : NUMBERS) {
      for (int hash : HASHES) {
        for (long page : pages) {
          for (long offset : offsets) {
            for (boolean replaces : new boolean[] {false, true}) {
              long addr = page << 32 | offset | (replaces ? Arena.REPLACES_OLDER : 0);
              long ref = RecordRef.of(number, hash, addr);
              String note = number + " " + hash + " " + page + " " + offset + " " + replaces;
              assertEquals(number, RecordRef.number(ref), note);
              assertEquals(addr, RecordRef.address(ref), note);
              assertTrue(RecordRef.mayMatch(ref, hash), note);
            }
          }
        }
      }
    }
  }

  @Test
  void addressesOfLaterPagesAreLeftOut() {
    for (int number : NUMBERS) {
      for (long page : new long[] {RecordRef.CARRIED_PAGES, 128, 5000, Integer.MAX_VALUE}) {
        for (long flag : new long[] {0, Arena.REPLACES_OLDER}) {
          long ref = RecordRef.of(number, 0x9747b28c, page << 32 | 17 | flag);
          assertEquals(Arena.NONE, RecordRef.address(ref), "page " + page);
          assertEquals(number, RecordRef.number(ref), "page " + page);
        }
      }
    }
  }

  @Test
  void tagsRuleOutHashesWithOtherTopBits() {
    long ref = RecordRef.of(3, 0x9747b28c, 1L << 32 | 40);
    assertTrue(RecordRef.mayMatch(ref, 0x9747b28c));
    assertTrue(RecordRef.mayMatch(ref, 0x97ffffff), "low bits are not in the tag");
    assertFalse(RecordRef.mayMatch(ref, 0x9f47b28c));
    assertFalse(RecordRef.mayMatch(ref, 0x1747b28c));
    int ruledOut = 0;
    for (int top = 0; top < 32; top++) {
      if (!RecordRef.mayMatch(ref, top << 27 | 0x47b28c)) {
        ruledOut++;
      }
    }
    assertEquals(31, ruledOut);
  }
}
