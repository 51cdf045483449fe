package io.cobble.flink.v1_19;

import java.nio.file.Path;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.ttl.StateBackendTestContext;
import org.apache.flink.runtime.state.ttl.TtlStateTestBase;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.io.TempDir;

/** Flink's state TTL test base: TTL through Flink's decorators over Cobble states. */
class CobbleTtlStateTest extends TtlStateTestBase {

  @TempDir static Path dir;

  @Override
  protected StateBackendTestContext createStateBackendTestContext(TtlTimeProvider timeProvider) {
    return new StateBackendTestContext(timeProvider) {
      @Override
      protected StateBackend createStateBackend() {
        Configuration config = new Configuration();
        config.setString("state.backend.cobble.localdir", dir.resolve("local").toString());
        return new CobbleStateBackend().configure(config, getClass().getClassLoader());
      }

      @Override
      protected CheckpointStorage createCheckpointStorage() {
        return new FileSystemCheckpointStorage(
            new org.apache.flink.core.fs.Path(dir.resolve("checkpoints").toUri()));
      }
    };
  }

  /**
   * Cobble does not drop expired entries while writing a full snapshot (Flink's TTL snapshot
   * transformers): the base's two cleanup-in-full-snapshot tests are gated by this flag and skipped
   * (module README).
   */
  @Override
  public boolean isSavepoint() {
    return false;
  }
}
