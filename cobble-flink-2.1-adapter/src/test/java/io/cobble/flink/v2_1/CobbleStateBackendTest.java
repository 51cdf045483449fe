package io.cobble.flink.v2_1;

import io.cobble.flink.asyncstate.CobbleTestBaseSetup;
import io.cobble.flink.asyncstate.CobbleTestBaseSetup.Storage;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Flink 2.1's keyed state backend test base against the 2.1+ adapter, both storages. */
@ExtendWith(ParameterizedTestExtension.class)
public class CobbleStateBackendTest extends StateBackendTestBase<AbstractStateBackend> {

  @TempDir static Path tempFolder;

  @Parameter public Storage storage;

  @Parameters(name = "storage={0}")
  public static List<Object[]> modes() {
    return CobbleTestBaseSetup.storages();
  }

  @Override
  protected ConfigurableStateBackend getStateBackend() {
    return new CobbleStateBackend()
        .configure(CobbleTestBaseSetup.backendConfig(tempFolder), getClass().getClassLoader());
  }

  @Override
  protected CheckpointStorage getCheckpointStorage() throws Exception {
    return storage.create(tempFolder);
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
