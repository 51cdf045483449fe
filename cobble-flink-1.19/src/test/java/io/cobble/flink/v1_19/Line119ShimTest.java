package io.cobble.flink.v1_19;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.shim.FlinkLine;
import io.cobble.flink.shim.FlinkLineShim;
import io.cobble.flink.shim.RecoveryClaimMode;
import java.util.Map;
import org.junit.jupiter.api.Test;

class Line119ShimTest {

  private final FlinkLineShim shim = new Line119Shim();

  @Test
  void theRunningFlinkSelectsThisLine() {
    assertEquals(FlinkLine.LINE_1_19, ShimLoader.current().line());
  }

  @Test
  void flink119KeepsTheOldKeys() {
    assertEquals("state.checkpoints.dir", shim.checkpointDirKey("1.19.3"));
    assertEquals("config.yaml", shim.configFileName("1.19.3"));
    assertEquals("execution.savepoint-restore-mode", shim.recoveryClaimModeKey("1.19.3"));
  }

  @Test
  void flink120UsesTheFlip406Keys() {
    assertEquals("execution.checkpointing.dir", shim.checkpointDirKey("1.20.3"));
    assertEquals("execution.state-recovery.claim-mode", shim.recoveryClaimModeKey("1.20.3"));
  }

  @Test
  void flink120StillHonoursTheDeprecatedClaimKeyButPrefersTheNewOne() {
    assertEquals(
        RecoveryClaimMode.CLAIM,
        shim.recoveryClaimMode("1.20.3", Map.of("execution.savepoint-restore-mode", "CLAIM")));
    assertEquals(
        RecoveryClaimMode.LEGACY,
        shim.recoveryClaimMode(
            "1.20.3",
            Map.of(
                "execution.state-recovery.claim-mode", "LEGACY",
                "execution.savepoint-restore-mode", "CLAIM")));
    assertEquals(RecoveryClaimMode.NO_CLAIM, shim.recoveryClaimMode("1.19.3", Map.of()));
  }
}
