package io.cobble.flink.v1_19;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code localdir.primary-high-priority: false} (working files on the checkpoint storage) is not
 * built yet: a backend asked for it fails at creation, naming the key and the fix, instead of
 * silently keeping its files local; the default opens.
 */
class PrimaryOnCheckpointStorageTest {

  private static final String KEY = "state.backend.cobble.localdir.primary-high-priority";

  @TempDir Path dir;

  @Test
  void falseIsRejectedNamingTheKeyAndTheFix() throws Exception {
    try (TestBackends backends = new TestBackends(dir).with(KEY, "false")) {
      Exception e =
          assertThrows(
              Exception.class,
              () -> backends.create(IntSerializer.INSTANCE, new KeyGroupRange(0, 9), 10));
      IllegalConfigurationException cause =
          ExceptionUtils.findThrowable(e, IllegalConfigurationException.class)
              .orElseThrow(() -> new AssertionError("no IllegalConfigurationException", e));
      assertTrue(cause.getMessage().startsWith(KEY + ": false"), cause.getMessage());
      assertTrue(cause.getMessage().contains("set it to true"), cause.getMessage());
    }
  }

  @Test
  void trueOpens() throws Exception {
    try (TestBackends backends = new TestBackends(dir).with(KEY, "true")) {
      assertNotNull(backends.create(IntSerializer.INSTANCE, new KeyGroupRange(0, 9), 10));
    }
  }
}
