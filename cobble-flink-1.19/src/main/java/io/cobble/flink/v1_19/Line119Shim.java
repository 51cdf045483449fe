package io.cobble.flink.v1_19;

import io.cobble.flink.shim.FlinkLine;
import io.cobble.flink.shim.FlinkLineShim;
import io.cobble.flink.shim.RecoveryClaimMode;
import java.util.Map;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.core.memory.ManagedMemoryUseCase;
import org.apache.flink.runtime.jobgraph.SavepointConfigOptions;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamConfig;

/**
 * Flink 1.19 and 1.20: {@code config.yaml}. 1.20 renamed the checkpoint-directory and claim-mode
 * keys (FLIP-406, {@code RecoveryClaimMode}); its new names are spelled out because this module
 * compiles against 1.19, and the old names stay readable as Flink's deprecated aliases.
 */
public final class Line119Shim implements FlinkLineShim {

  private static final String CHECKPOINT_DIR_1_20 = "execution.checkpointing.dir";
  private static final String CLAIM_MODE_1_20 = "execution.state-recovery.claim-mode";

  @Override
  public FlinkLine line() {
    return FlinkLine.LINE_1_19;
  }

  @Override
  public String checkpointDirKey(String flinkVersion) {
    return is119(flinkVersion)
        ? CheckpointingOptions.CHECKPOINTS_DIRECTORY.key()
        : CHECKPOINT_DIR_1_20;
  }

  @Override
  public String configFileName(String flinkVersion) {
    return GlobalConfiguration.FLINK_CONF_FILENAME;
  }

  @Override
  public String recoveryClaimModeKey(String flinkVersion) {
    return is119(flinkVersion) ? SavepointConfigOptions.RESTORE_MODE.key() : CLAIM_MODE_1_20;
  }

  @Override
  public RecoveryClaimMode recoveryClaimMode(
      String flinkVersion, Map<String, String> configuration) {
    return is119(flinkVersion)
        ? FlinkLineShim.claimModeFrom(configuration, SavepointConfigOptions.RESTORE_MODE.key())
        : FlinkLineShim.claimModeFrom(
            configuration, CLAIM_MODE_1_20, SavepointConfigOptions.RESTORE_MODE.key());
  }

  private static boolean is119(String flinkVersion) {
    return flinkVersion.startsWith("1.19");
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

  @Override
  public StateBackend newCobbleStateBackend() {
    return new CobbleStateBackend();
  }
}
