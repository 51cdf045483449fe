package io.cobble.util;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BytesTest {
  @Test
  void compareMatchesArraysCompareUnsigned() {
    Random rnd = new Random(42);
    for (int iter = 0; iter < 200_000; iter++) {
      byte[] a = new byte[rnd.nextInt(90)];
      rnd.nextBytes(a);
      byte[] b;
      if (rnd.nextBoolean()) {
        // Share a prefix so the difference lands at every position, including past 8-byte words.
        b = Arrays.copyOf(a, rnd.nextInt(90));
        if (b.length > 0 && rnd.nextBoolean()) {
          b[rnd.nextInt(b.length)] = (byte) rnd.nextInt(256);
        }
      } else {
        b = new byte[rnd.nextInt(90)];
        rnd.nextBytes(b);
      }
      assertEquals(Arrays.compareUnsigned(a, b), Bytes.compare(a, b));
      int aOff = a.length == 0 ? 0 : rnd.nextInt(a.length);
      int bOff = b.length == 0 ? 0 : rnd.nextInt(b.length);
      int aLen = rnd.nextInt(a.length - aOff + 1);
      int bLen = rnd.nextInt(b.length - bOff + 1);
      assertEquals(
          Arrays.compareUnsigned(a, aOff, aOff + aLen, b, bOff, bOff + bLen),
          Bytes.compare(a, aOff, aLen, b, bOff, bLen));
    }
    assertEquals(0, Bytes.compare(null, null));
  }

  @Test
  void mismatchMatchesArraysMismatch() {
    Random rnd = new Random(7);
    for (int iter = 0; iter < 200_000; iter++) {
      byte[] a = new byte[rnd.nextInt(90)];
      rnd.nextBytes(a);
      byte[] b = Arrays.copyOf(a, rnd.nextInt(90));
      if (b.length > 0 && rnd.nextBoolean()) {
        b[rnd.nextInt(b.length)] = (byte) rnd.nextInt(256);
      }
      int aOff = a.length == 0 ? 0 : rnd.nextInt(Math.min(a.length, 3));
      int bOff = b.length == 0 ? 0 : rnd.nextInt(Math.min(b.length, 3));
      int aLen = rnd.nextInt(a.length - aOff + 1);
      int bLen = rnd.nextInt(b.length - bOff + 1);
      assertEquals(
          Arrays.mismatch(a, aOff, aOff + aLen, b, bOff, bOff + bLen),
          Bytes.mismatch(a, aOff, aLen, b, bOff, bLen));
    }
  }
}
