package io.cobble.flink.v2_0;

import io.cobble.flink.shim.FlinkLine;
import io.cobble.flink.shim.FlinkLineShim;
import io.cobble.flink.shim.RecoveryClaimMode;
import io.cobble.flink.shim.RunningFlink;
import java.util.Map;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.memory.ManagedMemoryUseCase;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamConfig;

/** Flink 2.0 and later: {@code config.yaml} only, {@code RecoveryClaimMode}. */
public final class Line20Shim implements FlinkLineShim {

  /** Flink 2.x still reads the 1.x key as a deprecated alias of the claim mode. */
  private static final String LEGACY_CLAIM_MODE_KEY = "execution.savepoint-restore-mode";

  @Override
  public FlinkLine line() {
    return FlinkLine.LINE_2_0;
  }

  @Override
  public String checkpointDirKey(String flinkVersion) {
    return CheckpointingOptions.CHECKPOINTS_DIRECTORY.key();
  }

  @Override
  public String configFileName(String flinkVersion) {
    return GlobalConfiguration.FLINK_CONF_FILENAME;
  }

  @Override
  public String recoveryClaimModeKey(String flinkVersion) {
    return StateRecoveryOptions.RESTORE_MODE.key();
  }

  @Override
  public RecoveryClaimMode recoveryClaimMode(
      String flinkVersion, Map<String, String> configuration) {
    return FlinkLineShim.claimModeFrom(
        configuration, recoveryClaimModeKey(flinkVersion), LEGACY_CLAIM_MODE_KEY);
  }

  @Override
  public int subtaskIndex(RuntimeContext context) {
    return context.getTaskInfo().getIndexOfThisSubtask();
  }

  @Override
  public <T> Sink<T> discardingSink() {
    return new DiscardingSink<>();
  }

  @Override
  public double operatorManagedMemoryFraction(
      StreamConfig operatorConfig,
      Configuration jobConfig,
      Configuration taskManagerConfig,
      ClassLoader userCodeClassLoader) {
    return operatorConfig.getManagedMemoryFractionOperatorUseCaseOfSlot(
        ManagedMemoryUseCase.OPERATOR, jobConfig, taskManagerConfig, userCodeClassLoader);
  }

  /**
   * Flink 2.1 changed the constructor of {@code AbstractKeyedStateBackend}, so 2.1 and later get
   * the backend of the adapter compiled against 2.1; its classes are only loaded there.
   */
  @Override
  public StateBackend newCobbleStateBackend() {
    return RunningFlink.version().startsWith("2.0")
        ? new CobbleStateBackend()
        : new io.cobble.flink.v2_1.CobbleStateBackend();
  }
}
