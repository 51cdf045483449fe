package io.cobble.flink.state;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/**
 * Cobble keyed backends on a mock task environment, disposed together. The backend comes from the
 * factory a cluster names, so each line's tests get that line's backend.
 */
public final class TestBackends implements AutoCloseable {

  private final Path localDir;
  private final Configuration config = new Configuration();
  private final List<AbstractKeyedStateBackend<?>> backends = new ArrayList<>();
  private final List<MockEnvironment> envs = new ArrayList<>();
  private CheckpointStorageAccess checkpointStorage;

  public TestBackends(Path localDir) {
    this.localDir = localDir;
  }

  public TestBackends with(String key, String value) {
    config.setString(key, value);
    return this;
  }

  /** The checkpoint storage the tasks of later backends see. */
  public TestBackends checkpointStorage(CheckpointStorageAccess access) {
    this.checkpointStorage = access;
    return this;
  }

  public <K> AbstractKeyedStateBackend<K> create(
      TypeSerializer<K> keySerializer, KeyGroupRange range, int numberOfKeyGroups)
      throws Exception {
    return create(keySerializer, range, numberOfKeyGroups, Collections.emptyList());
  }

  public <K> AbstractKeyedStateBackend<K> create(
      TypeSerializer<K> keySerializer,
      KeyGroupRange range,
      int numberOfKeyGroups,
      Collection<KeyedStateHandle> restore)
      throws Exception {
    Configuration c = new Configuration(config);
    c.setString("state.backend.cobble.localdir", localDir.toString());
    StateBackend backend =
        new CobbleStateBackendFactory().createFromConfig(c, getClass().getClassLoader());
    MockEnvironment env = new MockEnvironmentBuilder().build();
    envs.add(env);
    if (checkpointStorage != null) {
      env.setCheckpointStorageAccess(checkpointStorage);
    }
    AbstractKeyedStateBackend<K> keyed =
        (AbstractKeyedStateBackend<K>)
            backend.createKeyedStateBackend(
                new KeyedStateBackendParametersImpl<>(
                    env,
                    new JobID(),
                    "test_op",
                    keySerializer,
                    numberOfKeyGroups,
                    range,
                    env.getTaskKvStateRegistry(),
                    TtlTimeProvider.DEFAULT,
                    new UnregisteredMetricsGroup(),
                    restore,
                    new CloseableRegistry()));
    backends.add(keyed);
    return keyed;
  }

  @Override
  public void close() throws Exception {
    for (AbstractKeyedStateBackend<?> b : backends) {
      b.dispose();
    }
    backends.clear();
    for (MockEnvironment e : envs) {
      e.close();
    }
    envs.clear();
  }

  /** {@code descriptor}'s state of {@code backend} in the void namespace. */
  public static <S extends org.apache.flink.api.common.state.State> S voidState(
      AbstractKeyedStateBackend<?> backend,
      org.apache.flink.api.common.state.StateDescriptor<S, ?> descriptor)
      throws Exception {
    return backend.getPartitionedState(
        org.apache.flink.runtime.state.VoidNamespace.INSTANCE,
        org.apache.flink.runtime.state.VoidNamespaceSerializer.INSTANCE,
        descriptor);
  }
}
