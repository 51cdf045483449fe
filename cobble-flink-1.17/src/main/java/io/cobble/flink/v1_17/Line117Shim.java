package io.cobble.flink.v1_17;

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
import org.apache.flink.streaming.api.graph.StreamConfig;

/** Flink 1.17 and 1.18: {@code flink-conf.yaml}, {@code RestoreMode}. */
public final class Line117Shim implements FlinkLineShim {

  @Override
  public FlinkLine line() {
    return FlinkLine.LINE_1_17;
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
    return SavepointConfigOptions.RESTORE_MODE.key();
  }

  @Override
  public RecoveryClaimMode recoveryClaimMode(
      String flinkVersion, Map<String, String> configuration) {
    return FlinkLineShim.claimModeFrom(configuration, recoveryClaimModeKey(flinkVersion));
  }

  @Override
  public int subtaskIndex(RuntimeContext context) {
    return context.getIndexOfThisSubtask();
  }

  @Override
  public <T> Sink<T> discardingSink() {
    return new DiscardingSink117<>();
  }

  @Override
  public double operatorManagedMemoryFraction(
      StreamConfig operatorConfig,
      Configuration jobConfig,
      Configuration taskManagerConfig,
      ClassLoader userCodeClassLoader) {
    return operatorConfig.getManagedMemoryFractionOperatorUseCaseOfSlot(
        ManagedMemoryUseCase.OPERATOR, taskManagerConfig, userCodeClassLoader);
  }

  @Override
  public StateBackend newCobbleStateBackend() {
    return new CobbleStateBackend();
  }
}
