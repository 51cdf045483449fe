package io.cobble.flink.v1_19;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cobble.flink.state.CobbleBackendSpec;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Restores from a path are accepted in CLAIM mode only, with the key of the running 1.19/1.20. */
class ClaimModeTest {

  @Test
  void noClaimRestoreFromAPathIsRejectedNamingClaimAndTheKey() {
    Map<String, String> job = new HashMap<>();
    job.put("execution.savepoint.path", "file:///tmp/chk-7");
    job.put("execution.savepoint-restore-mode", "NO_CLAIM");
    assertThatThrownBy(() -> CobbleBackendSpec.checkClaimMode(job))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("CLAIM")
        .hasMessageContaining("NO_CLAIM mode")
        .hasMessageContaining("'execution.savepoint-restore-mode'");
  }

  @Test
  void legacyAndTheDefaultAreRejectedToo() {
    Map<String, String> job = new HashMap<>();
    job.put("execution.savepoint.path", "file:///tmp/chk-7");
    assertThatThrownBy(() -> CobbleBackendSpec.checkClaimMode(job))
        .hasMessageContaining("NO_CLAIM mode");
    job.put("execution.savepoint-restore-mode", "LEGACY");
    assertThatThrownBy(() -> CobbleBackendSpec.checkClaimMode(job))
        .hasMessageContaining("LEGACY mode");
  }

  @Test
  void claimAndFailoverRestoresPass() {
    Map<String, String> job = new HashMap<>();
    assertThatCode(() -> CobbleBackendSpec.checkClaimMode(job)).doesNotThrowAnyException();
    job.put("execution.savepoint.path", "file:///tmp/chk-7");
    job.put("execution.savepoint-restore-mode", "claim");
    assertThatCode(() -> CobbleBackendSpec.checkClaimMode(job)).doesNotThrowAnyException();
  }
}
