package io.cobble.flink.v1_19;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.StateBackendMigrationTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.apache.flink.util.function.SupplierWithException;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Flink's serializer upgrade test base: Cobble rewrites values that need migration. */
@ExtendWith(ParameterizedTestExtension.class)
public class CobbleStateBackendMigrationTest
    extends StateBackendMigrationTestBase<CobbleStateBackend> {

  @TempDir static Path dir;

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
                      new org.apache.flink.core.fs.Path(dir.resolve("checkpoints").toUri()), 0, -1)
        });
  }

  @Override
  protected CobbleStateBackend getStateBackend() {
    Configuration config = new Configuration();
    config.setString("state.backend.cobble.localdir", dir.resolve("local").toString());
    return new CobbleStateBackend().configure(config, getClass().getClassLoader());
  }

  @Override
  protected CheckpointStorage getCheckpointStorage() throws Exception {
    return storageSupplier.get();
  }
}
