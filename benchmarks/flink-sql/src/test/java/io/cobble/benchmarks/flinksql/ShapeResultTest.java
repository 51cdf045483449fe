package io.cobble.benchmarks.flinksql;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ShapeResultTest {

  @Test
  void pairedRatioComparesRunsOfTheSameIteration() {
    ShapeResult cobble = new ShapeResult();
    ShapeResult paimon = new ShapeResult();
    cobble.add(100, 1000, 0);
    cobble.add(300, 1000, 0);
    cobble.add(900, 1000, 0);
    paimon.add(50, 1000, 0);
    paimon.add(600, 1000, 0);
    paimon.add(300, 1000, 0);

    assertEquals(300.0, cobble.median(), 1e-9);
    assertEquals(300.0, paimon.median(), 1e-9);
    assertEquals(100.0, cobble.min(), 1e-9);
    assertEquals(900.0, cobble.max(), 1e-9);
    // Run by run 2.0, 0.5 and 3.0, whose median is 2.0; the ratio of the medians is 1.0.
    assertEquals(2.0, cobble.medianPairedRatio(paimon), 1e-9);
    // A run the other engine does not have is left out of the pairs.
    paimon.add(1, 1000, 0);
    assertEquals(2.0, cobble.medianPairedRatio(paimon), 1e-9);
  }
}
