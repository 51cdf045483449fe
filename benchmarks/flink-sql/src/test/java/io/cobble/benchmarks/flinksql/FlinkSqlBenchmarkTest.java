package io.cobble.benchmarks.flinksql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The harness end to end at a tiny size, on real MiniClusters with the real Cobble, Paimon and
 * blackhole connectors: every shape either measures (after its exact hit-count check passed) or
 * names why it cannot run, and one engine's failure leaves the others measured.
 */
class FlinkSqlBenchmarkTest {

  @Test
  void everyShapeMeasuresOrSaysWhyNot(@TempDir Path dir) throws Exception {
    BenchSettings settings =
        BenchSettings.parse(
            new String[] {
              "--rows=2000", "--probes=2000", "--warmups=0", "--iterations=1", "--dir=" + dir
            });

    Map<Shape, Map<TableEngine, ShapeResult>> results = FlinkSqlBenchmark.run(settings);

    for (Shape shape : Shape.values()) {
      ShapeResult paimon = results.get(shape).get(TableEngine.PAIMON);
      assertTrue(paimon.isAvailable(), shape.label + " on Paimon: " + paimon.unavailableReason());
      assertEquals(1, paimon.runs(), shape.label + " on Paimon");
    }
    ShapeResult cobbleSink = results.get(Shape.SINK).get(TableEngine.COBBLE);
    assertTrue(cobbleSink.isAvailable(), "Cobble sink: " + cobbleSink.unavailableReason());
    assertEquals(1, cobbleSink.runs());
    ShapeResult sinkLimit = results.get(Shape.SINK).get(TableEngine.BLACKHOLE);
    assertTrue(sinkLimit.isAvailable(), "blackhole limit: " + sinkLimit.unavailableReason());
    assertEquals(1, sinkLimit.runs());
    assertTrue(
        !results.get(Shape.SINK).get(TableEngine.COBBLE_ASYNC).isAvailable(),
        "the async variant does not run the sink twice");
    for (Shape shape : new Shape[] {Shape.LOOKUP_HITS, Shape.LOOKUP_MISSES}) {
      for (TableEngine engine : new TableEngine[] {TableEngine.COBBLE, TableEngine.COBBLE_ASYNC}) {
        ShapeResult cobble = results.get(shape).get(engine);
        assertTrue(
            cobble.isAvailable(),
            shape.label + " on " + engine.label + ": " + cobble.unavailableReason());
        assertEquals(1, cobble.runs(), shape.label + " on " + engine.label);
        assertCountersAddUp(shape, engine, cobble.lastCounters());
      }
      // Measured only after its join returned exactly the shape's hits (the harness's check).
      ShapeResult limit = results.get(shape).get(TableEngine.BLACKHOLE);
      assertTrue(limit.isAvailable(), shape.label + " limit: " + limit.unavailableReason());
      assertEquals(1, limit.runs(), shape.label + " limit");
    }
  }

  /**
   * The counters each lookup run prints are the job's own: every one of the 2,000 probes counted
   * once as a hit or a miss (the probe keys are deterministic, so the split is exact), and on the
   * async function once as answered inline or handed off.
   */
  private static void assertCountersAddUp(
      Shape shape, TableEngine engine, Map<String, Long> counters) {
    String what = shape.label + " on " + engine.label + ": " + counters;
    assertEquals(200L * shape.hitsPerTen, counters.get("lookupHits"), what);
    assertEquals(200L * (10 - shape.hitsPerTen), counters.get("lookupMisses"), what);
    if (engine == TableEngine.COBBLE_ASYNC) {
      assertEquals(
          2000L, counters.get("lookupsAnsweredInline") + counters.get("lookupsHandedOff"), what);
    } else {
      assertFalse(counters.containsKey("lookupsAnsweredInline"), what);
    }
  }

  /**
   * With {@code --forks}, the jobs run in other JVMs: this one registers no lookup counter, while
   * each engine has one measured run per pass, read back from its forks with the forks' counters.
   */
  @Test
  void forksRunEachEngineInJvmsOfItsOwnAndMergeThePasses(@TempDir Path dir) throws Exception {
    String[] argv = {
      "--rows=2000",
      "--probes=2000",
      "--warmups=0",
      "--iterations=1",
      "--shapes=lookup-hits",
      "--engines=cobble,blackhole",
      "--forks=2",
      "--dir=" + dir
    };
    LookupCounters.reset();

    Map<Shape, Map<TableEngine, ShapeResult>> results =
        EngineForks.run(BenchSettings.parse(argv), argv);

    LookupCounters.describe();
    assertEquals(Map.of(), LookupCounters.totals(), "a lookup job ran in this JVM");
    for (TableEngine engine : new TableEngine[] {TableEngine.COBBLE, TableEngine.BLACKHOLE}) {
      ShapeResult result = results.get(Shape.LOOKUP_HITS).get(engine);
      assertTrue(result.isAvailable(), engine.label + ": " + result.unavailableReason());
      assertEquals(2, result.runs(), engine.label);
      for (int run = 0; run < 2; run++) {
        assertTrue(result.rowsPerSecond(run) > 0 && result.cpuNanosPerRow(run) > 0, engine.label);
      }
    }
    assertCountersAddUp(
        Shape.LOOKUP_HITS,
        TableEngine.COBBLE,
        results.get(Shape.LOOKUP_HITS).get(TableEngine.COBBLE).lastCounters());
  }

  @Test
  void unknownAndNonPositiveOptionsAreRejectedByName() {
    IllegalArgumentException unknown =
        assertThrows(
            IllegalArgumentException.class, () -> BenchSettings.parse(new String[] {"--row=5"}));
    assertTrue(unknown.getMessage().contains("[row]"), unknown.getMessage());
    IllegalArgumentException zero =
        assertThrows(
            IllegalArgumentException.class,
            () -> BenchSettings.parse(new String[] {"--buckets=0"}));
    assertEquals("--buckets must be greater than zero.", zero.getMessage());
    IllegalArgumentException shape =
        assertThrows(
            IllegalArgumentException.class,
            () -> BenchSettings.parse(new String[] {"--shapes=scan"}));
    assertTrue(shape.getMessage().contains("'scan'"), shape.getMessage());
  }
}
