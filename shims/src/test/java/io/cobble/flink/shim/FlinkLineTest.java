package io.cobble.flink.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class FlinkLineTest {

  @Test
  void everySupportedMinorHasExactlyOneLine() {
    String[][] expected = {
      {"1.17.2", "1.17"},
      {"1.18.1", "1.17"},
      {"1.19.3", "1.19"},
      {"1.20.3", "1.19"},
      {"2.0.0", "2.0"},
      {"2.1.1", "2.0"},
      {"2.2.0", "2.0"},
      {"2.3.0", "2.0"},
      {"2.3-SNAPSHOT", "2.0"}
    };
    for (String[] pair : expected) {
      long serving = FlinkLine.all().stream().filter(l -> l.serves(pair[0])).count();
      assertEquals(1, serving, pair[0]);
      assertEquals(pair[1], FlinkLine.serving(pair[0]).get().lineName(), pair[0]);
    }
  }

  @Test
  void unsupportedVersionsAreServedByNoLine() {
    assertEquals(Optional.empty(), FlinkLine.serving("1.16.3"));
    assertEquals(Optional.empty(), FlinkLine.serving("3.0.0"));
    assertFalse(FlinkLine.LINE_1_17.serves("1.19.0"));
    assertTrue(FlinkLine.LINE_2_0.serves("2.9.0"));
  }

  @Test
  void distJarNameFollowsTheMatrix() {
    assertEquals(
        "cobble-flink-dist-0.1.0-1-flink-2.0.jar", FlinkLine.LINE_2_0.distJarName("0.1.0", "1"));
  }

  @Test
  void garbageVersionIsRejected() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> FlinkLine.serving("unknown"));
    assertTrue(e.getMessage().contains("unknown"));
  }

  @Test
  void claimModeParsingNamesTheKey() {
    assertEquals(RecoveryClaimMode.CLAIM, RecoveryClaimMode.parse("k", " claim "));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> RecoveryClaimMode.parse("the.key", "x"));
    assertTrue(e.getMessage().contains("the.key"));
  }
}
