package io.cobble.flink.v1_17;

import io.cobble.flink.state.CobbleBackendSpec;
import io.cobble.flink.state.CobbleStateSettings;
import java.io.IOException;
import java.util.Collection;
import java.util.Map;
import javax.annotation.Nonnull;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.query.TaskKvStateRegistry;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.AbstractManagedMemoryStateBackend;
import org.apache.flink.runtime.state.BackendBuildingException;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.DefaultOperatorStateBackendBuilder;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStateBackend;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/**
 * The Cobble state backend on Flink 1.17 and 1.18: {@code StateBackend} takes the keyed backend's
 * parameters one by one here, and the keyed backend extends this line's {@code
 * AbstractKeyedStateBackend}.
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
    // Flink passes a Configuration; ReadableConfig has no way to list its keys on 1.17.
    Configuration merged =
        config instanceof Configuration ? ((Configuration) config).clone() : new Configuration();
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
      Environment env,
      JobID jobID,
      String operatorIdentifier,
      TypeSerializer<K> keySerializer,
      int numberOfKeyGroups,
      KeyGroupRange keyGroupRange,
      TaskKvStateRegistry kvStateRegistry,
      TtlTimeProvider ttlTimeProvider,
      MetricGroup metricGroup,
      @Nonnull Collection<KeyedStateHandle> stateHandles,
      CloseableRegistry cancelStreamRegistry)
      throws IOException {
    return createKeyedStateBackend(
        env,
        jobID,
        operatorIdentifier,
        keySerializer,
        numberOfKeyGroups,
        keyGroupRange,
        kvStateRegistry,
        ttlTimeProvider,
        metricGroup,
        stateHandles,
        cancelStreamRegistry,
        1.0);
  }

  @Override
  public <K> AbstractKeyedStateBackend<K> createKeyedStateBackend(
      Environment env,
      JobID jobID,
      String operatorIdentifier,
      TypeSerializer<K> keySerializer,
      int numberOfKeyGroups,
      KeyGroupRange keyGroupRange,
      TaskKvStateRegistry kvStateRegistry,
      TtlTimeProvider ttlTimeProvider,
      MetricGroup metricGroup,
      @Nonnull Collection<KeyedStateHandle> stateHandles,
      CloseableRegistry cancelStreamRegistry,
      double managedMemoryFraction)
      throws IOException {
    Map<String, String> jobConfig = env.getJobConfiguration().toMap();
    if (!stateHandles.isEmpty()) {
      CobbleBackendSpec.checkClaimMode(
          jobConfig, env.getTaskManagerInfo().getConfiguration().toMap());
    }
    CobbleBackendSpec<K> spec =
        new CobbleBackendSpec<>(
            settings(),
            jobID,
            operatorIdentifier,
            keySerializer,
            numberOfKeyGroups,
            keyGroupRange,
            stateHandles,
            cancelStreamRegistry,
            env.getUserCodeClassLoader().asClassLoader(),
            env.getMemoryManager(),
            managedMemoryFraction,
            metricGroup,
            env.getIOManager() == null ? null : env.getIOManager().getSpillingDirectoriesPaths(),
            IncrementalRemoteKeyedStateHandle::getMetaStateHandle);
    spec.checkpointStorage(env::getCheckpointStorageAccess);
    LatencyTrackingStateConfig latency =
        latencyTrackingConfigBuilder.setMetricGroup(metricGroup).build();
    try {
      return new CobbleKeyedStateBackend<>(
          spec,
          kvStateRegistry,
          keySerializer,
          env.getUserCodeClassLoader().asClassLoader(),
          env.getExecutionConfig(),
          ttlTimeProvider,
          latency,
          // The given registry only covers the restore: Flink closes it once the backend is built.
          new CloseableRegistry(),
          getCompressionDecorator(env.getExecutionConfig()),
          keyGroupRange,
          numberOfKeyGroups);
    } catch (IOException e) {
      throw e;
    } catch (Exception e) {
      throw new BackendBuildingException(
          "Failed to build the Cobble keyed state backend of " + operatorIdentifier, e);
    }
  }

  @Override
  public OperatorStateBackend createOperatorStateBackend(
      Environment env,
      String operatorIdentifier,
      @Nonnull Collection<OperatorStateHandle> stateHandles,
      CloseableRegistry cancelStreamRegistry)
      throws Exception {
    return new DefaultOperatorStateBackendBuilder(
            env.getUserCodeClassLoader().asClassLoader(),
            env.getExecutionConfig(),
            true,
            stateHandles,
            cancelStreamRegistry)
        .build();
  }

  @Override
  public boolean supportsSavepointFormat(SavepointFormatType formatType) {
    return formatType == SavepointFormatType.NATIVE || formatType == SavepointFormatType.CANONICAL;
  }
}
