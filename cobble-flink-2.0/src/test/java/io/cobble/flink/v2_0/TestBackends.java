package io.cobble.flink.v2_0;

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
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/** Cobble keyed backends on a mock task environment, disposed together. */
public final class TestBackends implements AutoCloseable {

  private final Path localDir;
  private final Configuration config = new Configuration();
  private final List<AbstractKeyedStateBackend<?>> backends = new ArrayList<>();
  private final List<MockEnvironment> envs = new ArrayList<>();

  public TestBackends(Path localDir) {
    this.localDir = localDir;
  }

  public TestBackends with(String key, String value) {
    config.setString(key, value);
    return this;
  }

  public <K> AbstractKeyedStateBackend<K> create(
      TypeSerializer<K> keySerializer, KeyGroupRange range, int numberOfKeyGroups)
      throws Exception {
    return create(keySerializer, range, numberOfKeyGroups, Collections.emptyList());
  }

  /** A backend restored from {@code restore}. */
  public <K> AbstractKeyedStateBackend<K> create(
      TypeSerializer<K> keySerializer,
      KeyGroupRange range,
      int numberOfKeyGroups,
      Collection<KeyedStateHandle> restore)
      throws Exception {
    Configuration c = new Configuration(config);
    c.setString("state.backend.cobble.localdir", localDir.toString());
    CobbleStateBackend backend = new CobbleStateBackend().configure(c, getClass().getClassLoader());
    MockEnvironment env = new MockEnvironmentBuilder().build();
    envs.add(env);
    AbstractKeyedStateBackend<K> keyed =
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
}
