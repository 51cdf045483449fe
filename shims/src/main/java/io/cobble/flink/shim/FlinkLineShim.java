package io.cobble.flink.shim;

import java.util.Map;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.streaming.api.graph.StreamConfig;

/**
 * What differs between Flink lines for the version-neutral Cobble code. Each line module implements
 * it once and registers the implementation for {@link java.util.ServiceLoader}; the answers may
 * depend on the running minor version inside the line (1.19 versus 1.20, for example).
 */
public interface FlinkLineShim {

  /** The line this implementation was compiled for. */
  FlinkLine line();

  /** The configuration key that names the checkpoint directory on the given Flink version. */
  String checkpointDirKey(String flinkVersion);

  /** The cluster configuration file name that the given Flink version reads. */
  String configFileName(String flinkVersion);

  /** The configuration key holding the restore (claim) mode on the given Flink version. */
  String recoveryClaimModeKey(String flinkVersion);

  /**
   * The restore mode a job configuration asks for on the given Flink version, honouring the
   * deprecated key where Flink still does, and Flink's default ({@code NO_CLAIM}) when unset.
   */
  RecoveryClaimMode recoveryClaimMode(String flinkVersion, Map<String, String> configuration);

  /**
   * The index of the running subtask: {@code RuntimeContext#getIndexOfThisSubtask()} on 1.17/1.18,
   * {@code getTaskInfo()} from 1.19 (the old accessor is gone in 2.0, and {@code TaskInfo} turned
   * from a class into an interface in 1.19, so neither call links on every line).
   */
  int subtaskIndex(RuntimeContext context);

  /**
   * A Sink V2 sink that drops its input, closing a topology whose last operator emits nothing. The
   * {@code Sink} interface differs between lines and Flink ships such a sink only from 1.18.
   */
  <T> Sink<T> discardingSink();

  /**
   * The operator's share of its slot's managed memory for the {@code OPERATOR} use case: {@code
   * StreamConfig#getManagedMemoryFractionOperatorUseCaseOfSlot}, which takes the job configuration
   * as well from 1.19 on (the 1.17/1.18 signature is gone there).
   */
  double operatorManagedMemoryFraction(
      StreamConfig operatorConfig,
      Configuration jobConfig,
      Configuration taskManagerConfig,
      ClassLoader userCodeClassLoader);

  /**
   * A new Cobble state backend for the running Flink, not yet configured. The keyed-backend entry
   * method of {@code StateBackend} and the constructor of {@code AbstractKeyedStateBackend} differ
   * between lines (and inside the 2.x line), so each line builds its own.
   */
  default StateBackend newCobbleStateBackend() {
    throw new UnsupportedOperationException(
        "the Cobble state backend is not built for Flink line " + line().lineName());
  }

  /**
   * Reads the claim mode from the first key present, in the order given (new key before its
   * deprecated aliases), defaulting to Flink's {@code NO_CLAIM}.
   */
  static RecoveryClaimMode claimModeFrom(Map<String, String> configuration, String... keys) {
    for (String key : keys) {
      String value = configuration.get(key);
      if (value != null) {
        return RecoveryClaimMode.parse(key, value);
      }
    }
    return RecoveryClaimMode.NO_CLAIM;
  }
}
