package io.cobble.flink.v1_19;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's keyed state backend test base against Cobble with {@code
 * localdir.primary-high-priority=false}: the working files live in the file-system checkpoint
 * storage the task sees (the JobManager's storage keeps no files and is rejected for this mode).
 */
@ExtendWith(ParameterizedTestExtension.class)
public class CobbleStateBackendPrimaryOnCheckpointStorageTest
    extends StateBackendTestBase<AbstractStateBackend> {

  @TempDir static Path tempFolder;

  @Parameter public String storage;

  @Parameters(name = "storage={0}")
  public static List<Object[]> modes() {
    return Collections.singletonList(new Object[] {"file-system"});
  }

  @Override
  protected ConfigurableStateBackend getStateBackend() {
    Configuration config = new Configuration();
    config.setString("state.backend.cobble.localdir", tempFolder.resolve("local").toString());
    config.setString("state.backend.cobble.localdir.primary-high-priority", "false");
    return new CobbleStateBackend().configure(config, getClass().getClassLoader());
  }

  @Override
  protected CheckpointStorage getCheckpointStorage() {
    return new FileSystemCheckpointStorage(
        new org.apache.flink.core.fs.Path(tempFolder.resolve("checkpoints").toUri()), 0, -1);
  }

  /** A task's environment carries its checkpoint storage; the test base's mock does not. */
  private void withCheckpointStorage(Environment env) throws Exception {
    if (env instanceof MockEnvironment) {
      CheckpointStorageAccess access =
          getCheckpointStorage().createCheckpointStorage(env.getJobID());
      access.initializeBaseLocationsForCheckpoint();
      ((MockEnvironment) env).setCheckpointStorageAccess(access);
    }
  }

  @Override
  protected <K> CheckpointableKeyedStateBackend<K> createKeyedBackend(
      TypeSerializer<K> keySerializer,
      int numberOfKeyGroups,
      KeyGroupRange keyGroupRange,
      Environment env)
      throws Exception {
    withCheckpointStorage(env);
    return super.createKeyedBackend(keySerializer, numberOfKeyGroups, keyGroupRange, env);
  }

  @Override
  protected <K> CheckpointableKeyedStateBackend<K> restoreKeyedBackend(
      TypeSerializer<K> keySerializer,
      int numberOfKeyGroups,
      KeyGroupRange keyGroupRange,
      List<KeyedStateHandle> state,
      Environment env)
      throws Exception {
    withCheckpointStorage(env);
    return super.restoreKeyedBackend(keySerializer, numberOfKeyGroups, keyGroupRange, state, env);
  }

  @Override
  protected boolean isSerializerPresenceRequiredOnRestore() {
    return false;
  }

  @Override
  protected boolean supportsAsynchronousSnapshots() {
    return true;
  }

  @Override
  protected boolean isSafeToReuseKVState() {
    return true;
  }
}
