package io.cobble.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CobbleVersion;
import io.cobble.flink.shim.FlinkLine;
import io.cobble.flink.shim.FlinkLineShim;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShimLoaderTest {

  private static String jar(String line) {
    return "cobble-flink-dist-" + CobbleVersion.get() + "-1-flink-" + line + ".jar";
  }

  @Test
  void selectsTheShimServingTheRunningVersion() {
    FlinkLineShim shim = new TestLineShim(FlinkLine.LINE_1_19);
    assertSame(shim, ShimLoader.select(List.of(shim), "1.20.3"));
  }

  @Test
  void wrongLineNamesTheJarToUseInstead() {
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> ShimLoader.select(List.of(new TestLineShim(FlinkLine.LINE_1_17)), "2.1.1"));
    assertTrue(e.getMessage().contains(jar("1.17")), e.getMessage());
    assertTrue(e.getMessage().contains("2.1.1"), e.getMessage());
    assertTrue(e.getMessage().contains("Use " + jar("2.0") + " instead"), e.getMessage());
  }

  @Test
  void unsupportedFlinkListsTheSupportedLines() {
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> ShimLoader.select(List.of(new TestLineShim(FlinkLine.LINE_1_17)), "1.16.3"));
    assertTrue(e.getMessage().contains("not supported"), e.getMessage());
    assertTrue(e.getMessage().contains("Flink 2.0 and later"), e.getMessage());
  }

  @Test
  void missingOrDuplicateLineModulesAreExplained() {
    IllegalStateException none =
        assertThrows(
            IllegalStateException.class,
            () -> ShimLoader.select(Collections.emptyList(), "1.19.3"));
    assertTrue(none.getMessage().contains(jar("1.19")), none.getMessage());
    IllegalStateException two =
        assertThrows(
            IllegalStateException.class,
            () ->
                ShimLoader.select(
                    Arrays.asList(
                        new TestLineShim(FlinkLine.LINE_1_17),
                        new TestLineShim(FlinkLine.LINE_2_0)),
                    "2.0.0"));
    assertTrue(two.getMessage().contains("keep only " + jar("2.0")), two.getMessage());
  }

  @Test
  void noShimIsPackagedWithTheNeutralModule() {
    // The only shim on this module's test class path is the test one.
    List<FlinkLineShim> shims = ShimLoader.discover();
    assertEquals(1, shims.size());
    assertEquals(TestLineShim.class, shims.get(0).getClass());
  }
}
