package io.cobble.flink.v2_0;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.shim.FlinkLine;
import io.cobble.flink.shim.FlinkLineShim;
import io.cobble.flink.shim.RecoveryClaimMode;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.apache.flink.configuration.FallbackKey;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.junit.jupiter.api.Test;

class Line20ShimTest {

  private final FlinkLineShim shim = new Line20Shim();

  @Test
  void theRunningFlinkSelectsThisLine() {
    assertEquals(FlinkLine.LINE_2_0, ShimLoader.current().line());
  }

  @Test
  void keysAreThoseOfFlink2() {
    assertEquals("execution.checkpointing.dir", shim.checkpointDirKey("2.0.0"));
    assertEquals("config.yaml", shim.configFileName("2.3.0"));
    assertEquals("execution.state-recovery.claim-mode", shim.recoveryClaimModeKey("2.0.0"));
  }

  @Test
  void claimModeReadsTheNewKeyThenTheDeprecatedOne() {
    assertEquals(
        RecoveryClaimMode.CLAIM,
        shim.recoveryClaimMode("2.0.0", Map.of("execution.state-recovery.claim-mode", "CLAIM")));
    assertEquals(
        RecoveryClaimMode.CLAIM,
        shim.recoveryClaimMode("2.1.1", Map.of("execution.savepoint-restore-mode", "claim")));
    assertEquals(RecoveryClaimMode.NO_CLAIM, shim.recoveryClaimMode("2.0.0", Map.of()));
  }

  @Test
  void flinkItselfStillAcceptsTheDeprecatedClaimKey() {
    assertTrue(
        StreamSupport.stream(StateRecoveryOptions.RESTORE_MODE.fallbackKeys().spliterator(), false)
            .map(FallbackKey::getKey)
            .anyMatch("execution.savepoint-restore-mode"::equals));
  }
}
