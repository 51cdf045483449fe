package io.cobble.flink.v1_19;

import io.cobble.flink.state.CobbleBackendSpec;
import io.cobble.flink.state.CobbleStateSettings;
import java.io.IOException;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.AbstractManagedMemoryStateBackend;
import org.apache.flink.runtime.state.BackendBuildingException;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.DefaultOperatorStateBackendBuilder;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStateBackend;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;

/**
 * The Cobble state backend on Flink 1.19 and 1.20: {@code StateBackend} takes a parameter object
 * here, and the keyed backend extends this line's {@code AbstractKeyedStateBackend}.
 */
public final class CobbleStateBackend extends AbstractManagedMemoryStateBackend
    implements ConfigurableStateBackend {

  private static final long serialVersionUID = 1L;

  /** Settings given to this instance; they win over the configuration passed to configure. */
  private final Configuration configuration;

  private transient CobbleStateSettings settings;

  public CobbleStateBackend() {
    this(new Configuration());
  }

  public CobbleStateBackend(Configuration configuration) {
    this.configuration = configuration;
  }

  @Override
  public CobbleStateBackend configure(ReadableConfig config, ClassLoader classLoader) {
    Configuration merged = new Configuration();
    if (config instanceof Configuration) {
      merged.addAll((Configuration) config);
    } else {
      merged.addAll(Configuration.fromMap(config.toMap()));
    }
    merged.addAll(configuration);
    CobbleStateBackend copy = new CobbleStateBackend(merged);
    copy.latencyTrackingConfigBuilder = latencyTrackingConfigBuilder.configure(config);
    copy.settings();
    return copy;
  }

  private CobbleStateSettings settings() {
    if (settings == null) {
      try {
        settings = CobbleStateSettings.fromConfig(configuration);
      } catch (IllegalArgumentException e) {
        throw new IllegalConfigurationException(e.getMessage(), e);
      }
    }
    return settings;
  }

  @Override
  public <K> AbstractKeyedStateBackend<K> createKeyedStateBackend(
      KeyedStateBackendParameters<K> parameters) throws IOException {
    Environment env = parameters.getEnv();
    Map<String, String> jobConfig = env.getJobConfiguration().toMap();
    if (!parameters.getStateHandles().isEmpty()) {
      CobbleBackendSpec.checkClaimMode(jobConfig);
    }
    CobbleBackendSpec<K> spec =
        new CobbleBackendSpec<>(
            settings(),
            parameters.getJobID(),
            parameters.getOperatorIdentifier(),
            parameters.getKeySerializer(),
            parameters.getNumberOfKeyGroups(),
            parameters.getKeyGroupRange(),
            parameters.getStateHandles(),
            parameters.getCancelStreamRegistry(),
            env.getUserCodeClassLoader().asClassLoader(),
            env.getMemoryManager(),
            parameters.getManagedMemoryFraction(),
            parameters.getMetricGroup(),
            env.getIOManager() == null ? null : env.getIOManager().getSpillingDirectoriesPaths(),
            IncrementalRemoteKeyedStateHandle::getMetaDataStateHandle);
    spec.checkpointStorage(env::getCheckpointStorageAccess);
    LatencyTrackingStateConfig latency =
        latencyTrackingConfigBuilder.setMetricGroup(parameters.getMetricGroup()).build();
    try {
      return new CobbleKeyedStateBackend<>(
          spec,
          parameters.getKvStateRegistry(),
          parameters.getKeySerializer(),
          env.getUserCodeClassLoader().asClassLoader(),
          env.getExecutionConfig(),
          parameters.getTtlTimeProvider(),
          latency,
          // The given registry only covers the restore: Flink closes it once the backend is built.
          new CloseableRegistry(),
          getCompressionDecorator(env.getExecutionConfig()),
          parameters.getKeyGroupRange(),
          parameters.getNumberOfKeyGroups());
    } catch (IOException e) {
      throw e;
    } catch (Exception e) {
      throw new BackendBuildingException(
          "Failed to build the Cobble keyed state backend of " + parameters.getOperatorIdentifier(),
          e);
    }
  }

  @Override
  public OperatorStateBackend createOperatorStateBackend(OperatorStateBackendParameters parameters)
      throws Exception {
    Environment env = parameters.getEnv();
    return new DefaultOperatorStateBackendBuilder(
            env.getUserCodeClassLoader().asClassLoader(),
            env.getExecutionConfig(),
            true,
            parameters.getStateHandles(),
            parameters.getCancelStreamRegistry())
        .build();
  }

  @Override
  public boolean supportsSavepointFormat(SavepointFormatType formatType) {
    return formatType == SavepointFormatType.NATIVE || formatType == SavepointFormatType.CANONICAL;
  }
}
