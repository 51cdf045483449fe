package org.apache.flink.runtime.state.v2;

import io.cobble.flink.asyncstate.CobbleTestBaseSetup;
import io.cobble.flink.asyncstate.CobbleTestBaseSetup.Storage;
import io.cobble.flink.v2_1.CobbleStateBackend;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's State V2 backend test base against Cobble's asynchronous backend, every test of it. In
 * Flink's package, where its test methods are visible.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class CobbleAsyncStateBackendTest extends StateBackendTestV2Base<AbstractStateBackend> {

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
  protected void restoreJob() {
    // Restores need nothing besides the state handles.
  }
}
