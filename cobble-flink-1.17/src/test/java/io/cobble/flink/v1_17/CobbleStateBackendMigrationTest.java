package io.cobble.flink.v1_17;

import java.io.IOException;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.StateBackendMigrationTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;

/** Flink's serializer upgrade test base (JUnit 4 on 1.17): Cobble rewrites migrated values. */
public class CobbleStateBackendMigrationTest
    extends StateBackendMigrationTestBase<CobbleStateBackend> {

  @Override
  protected CobbleStateBackend getStateBackend() throws IOException {
    Configuration config = new Configuration();
    config.setString("state.backend.cobble.localdir", tempFolder.newFolder().getAbsolutePath());
    return new CobbleStateBackend().configure(config, getClass().getClassLoader());
  }

  @Override
  protected CheckpointStorage getCheckpointStorage() throws IOException {
    return new FileSystemCheckpointStorage(
        new org.apache.flink.core.fs.Path(tempFolder.newFolder().toURI()), 0, -1);
  }
}
