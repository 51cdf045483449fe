package io.cobble.flink;

import io.cobble.flink.shim.FlinkLine;
import io.cobble.flink.shim.FlinkLineShim;
import io.cobble.flink.shim.RecoveryClaimMode;
import java.util.Map;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.memory.ManagedMemoryUseCase;
import org.apache.flink.streaming.api.graph.StreamConfig;

/**
 * The line shim of this module's tests, which run on the Flink it compiles against (1.17): lets the
 * table factory pass the line guard without a line module.
 */
public final class TestLineShim implements FlinkLineShim {

  private final FlinkLine line;

  public TestLineShim() {
    this(FlinkLine.LINE_1_17);
  }

  /** A shim answering as {@code line}, enough for selecting among lines. */
  TestLineShim(FlinkLine line) {
    this.line = line;
  }

  @Override
  public FlinkLine line() {
    return line;
  }

  @Override
  public String checkpointDirKey(String flinkVersion) {
    throw new UnsupportedOperationException();
  }

  @Override
  public String configFileName(String flinkVersion) {
    throw new UnsupportedOperationException();
  }

  @Override
  public String recoveryClaimModeKey(String flinkVersion) {
    throw new UnsupportedOperationException();
  }

  @Override
  public RecoveryClaimMode recoveryClaimMode(String flinkVersion, Map<String, String> config) {
    throw new UnsupportedOperationException();
  }

  @Override
  public int subtaskIndex(RuntimeContext context) {
    return context.getIndexOfThisSubtask();
  }

  @Override
  public <T> Sink<T> discardingSink() {
    return context -> new DiscardingWriter<>();
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

  private static final class DiscardingWriter<T> implements SinkWriter<T> {
    @Override
    public void write(T element, Context context) {}

    @Override
    public void flush(boolean endOfInput) {}

    @Override
    public void close() {}
  }
}
