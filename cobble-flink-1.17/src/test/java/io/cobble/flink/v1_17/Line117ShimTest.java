package io.cobble.flink.v1_17;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.shim.FlinkLine;
import io.cobble.flink.shim.FlinkLineShim;
import io.cobble.flink.shim.RecoveryClaimMode;
import java.util.Map;
import org.junit.jupiter.api.Test;

class Line117ShimTest {

  @Test
  void theRunningFlinkSelectsThisLine() {
    assertEquals(FlinkLine.LINE_1_17, ShimLoader.current().line());
  }

  @Test
  void keysAreThoseOfFlink117() {
    FlinkLineShim shim = new Line117Shim();
    assertEquals("state.checkpoints.dir", shim.checkpointDirKey("1.18.1"));
    assertEquals("flink-conf.yaml", shim.configFileName("1.17.2"));
    assertEquals("execution.savepoint-restore-mode", shim.recoveryClaimModeKey("1.17.2"));
  }

  @Test
  void claimModeDefaultsToFlinksNoClaim() {
    FlinkLineShim shim = new Line117Shim();
    assertEquals(RecoveryClaimMode.NO_CLAIM, shim.recoveryClaimMode("1.17.2", Map.of()));
    assertEquals(
        RecoveryClaimMode.CLAIM,
        shim.recoveryClaimMode("1.17.2", Map.of("execution.savepoint-restore-mode", "claim")));
  }
}
