package io.cobble.flink.v1_17;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.util.function.SupplierWithException;
import org.junit.ClassRule;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;

/** Flink's own keyed state backend test base (JUnit 4 on 1.17) against Cobble, both storages. */
@RunWith(Parameterized.class)
public class CobbleStateBackendTest extends StateBackendTestBase<AbstractStateBackend> {

  @ClassRule public static final TemporaryFolder TEMP = new TemporaryFolder();

  @Parameterized.Parameter
  public SupplierWithException<CheckpointStorage, IOException> storageSupplier;

  @Parameterized.Parameters
  public static List<Object[]> modes() {
    return Arrays.asList(
        new Object[] {
          (SupplierWithException<CheckpointStorage, IOException>) JobManagerCheckpointStorage::new
        },
        new Object[] {
          (SupplierWithException<CheckpointStorage, IOException>)
              () ->
                  new FileSystemCheckpointStorage(
                      new org.apache.flink.core.fs.Path(TEMP.newFolder().toURI()), 0, -1)
        });
  }

  @Override
  protected ConfigurableStateBackend getStateBackend() throws IOException {
    Configuration config = new Configuration();
    config.setString("state.backend.cobble.localdir", TEMP.newFolder().getAbsolutePath());
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
