package io.cobble.flink.state;

import io.cobble.flink.ShimLoader;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendFactory;

/**
 * Selected with {@code state.backend.type: io.cobble.flink.state.CobbleStateBackendFactory}. Builds
 * the backend of the running Flink's line (through the line shim) and configures it from the
 * configuration Flink passes, which holds the job's settings over the cluster's.
 */
public final class CobbleStateBackendFactory implements StateBackendFactory<StateBackend> {

  @Override
  public StateBackend createFromConfig(ReadableConfig config, ClassLoader classLoader) {
    try {
      CobbleStateSettings.fromConfig(config);
    } catch (IllegalArgumentException e) {
      throw new IllegalConfigurationException(e.getMessage(), e);
    }
    StateBackend backend = ShimLoader.current().newCobbleStateBackend();
    return ((ConfigurableStateBackend) backend).configure(config, classLoader);
  }
}
