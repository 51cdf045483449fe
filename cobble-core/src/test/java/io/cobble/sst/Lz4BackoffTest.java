package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Which blocks of a table get an LZ4 attempt, as data stops and starts compressing. */
class Lz4BackoffTest {

  @Test
  void backsOffOnlyAfterARunOfFailuresAndResumesOnTheFirstSampledSuccess() {
    Lz4Backoff b = new Lz4Backoff();
    List<Integer> tried = new ArrayList<>();
    // Blocks 0..99 do not compress, 100..199 do.
    for (int block = 0; block < 200; block++) {
      if (b.attempt()) {
        tried.add(block);
        b.result(block >= 100);
      }
    }
    List<Integer> expected = new ArrayList<>();
    for (int block = 0; block < Lz4Backoff.RUN; block++) {
      expected.add(block);
    }
    int sampled = Lz4Backoff.RUN - 1;
    while (sampled + Lz4Backoff.EVERY < 100) {
      sampled += Lz4Backoff.EVERY;
      expected.add(sampled);
    }
    int resumed = sampled + Lz4Backoff.EVERY;
    for (int block = resumed; block < 200; block++) {
      expected.add(block);
    }
    assertEquals(expected, tried);
  }

  @Test
  void compressibleDataIsTriedOnEveryBlockDespiteOccasionalFailures() {
    Lz4Backoff b = new Lz4Backoff();
    Random r = new Random(5);
    for (int block = 0; block < 10_000; block++) {
      assertTrue(b.attempt(), "block " + block);
      // Never RUN failures in a row.
      b.result(block % Lz4Backoff.RUN != 0 || r.nextBoolean());
    }
  }
}
