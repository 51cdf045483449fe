package io.cobble.flink.asyncstate;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;

/**
 * What Flink's state backend test bases need from every 2.x line's Cobble test (the synchronous
 * {@code StateBackendTestBase} and the State V2 {@code StateBackendTestV2Base}, on 2.0 and 2.1+):
 * the two checkpoint storages each test runs with, and the backend's configuration. Only the Flink
 * base class and the line's backend class stay in the line's test.
 */
public final class CobbleTestBaseSetup {

  /** A checkpoint storage a test base runs with; the parameter of the parameterized tests. */
  public enum Storage {
    JOB_MANAGER,
    FILE_SYSTEM;

    /** The storage, its files (if any) under {@code dir}. */
    public CheckpointStorage create(Path dir) {
      return this == JOB_MANAGER
          ? new JobManagerCheckpointStorage()
          : new FileSystemCheckpointStorage(
              new org.apache.flink.core.fs.Path(dir.resolve("checkpoints").toUri()), 0, -1);
    }
  }

  private CobbleTestBaseSetup() {}

  /** The parameters of a test base: one run per storage. */
  public static List<Object[]> storages() {
    return Arrays.asList(new Object[] {Storage.JOB_MANAGER}, new Object[] {Storage.FILE_SYSTEM});
  }

  /** The Cobble backend's configuration: its working files under {@code dir}. */
  public static Configuration backendConfig(Path dir) {
    Configuration config = new Configuration();
    config.setString("state.backend.cobble.localdir", dir.resolve("local").toString());
    return config;
  }
}
