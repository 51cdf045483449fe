package io.cobble.flink.v2_1;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.apache.flink.util.function.SupplierWithException;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Flink 2.1's keyed state backend test base against the 2.1+ adapter, both storages. */
@ExtendWith(ParameterizedTestExtension.class)
public class CobbleStateBackendTest extends StateBackendTestBase<AbstractStateBackend> {

  @TempDir static Path tempFolder;

  @Parameter public SupplierWithException<CheckpointStorage, IOException> storageSupplier;

  @Parameters(name = "storage={0}")
  public static List<Object[]> modes() {
    return Arrays.asList(
        new Object[] {
          (SupplierWithException<CheckpointStorage, IOException>) JobManagerCheckpointStorage::new
        },
        new Object[] {
          (SupplierWithException<CheckpointStorage, IOException>)
              () ->
                  new FileSystemCheckpointStorage(
                      new org.apache.flink.core.fs.Path(tempFolder.resolve("checkpoints").toUri()),
                      0,
                      -1)
        });
  }

  @Override
  protected ConfigurableStateBackend getStateBackend() {
    Configuration config = new Configuration();
    config.setString("state.backend.cobble.localdir", tempFolder.resolve("local").toString());
    return new CobbleStateBackend().configure(config, getClass().getClassLoader());
  }

  @Override
  protected CheckpointStorage getCheckpointStorage() throws Exception {
    return storageSupplier.get();
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
