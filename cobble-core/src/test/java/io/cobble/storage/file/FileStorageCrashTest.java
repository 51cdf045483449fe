package io.cobble.storage.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.ChildJvm;
import io.cobble.storage.MetadataFile;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a process that keeps publishing metadata; what it leaves must read whole or not at all. The
 * timeout only guards against a hang.
 */
@Timeout(300)
class FileStorageCrashTest {

  @TempDir Path dir;

  @Test
  void killedPublisherLeavesAWholeVersion() throws Exception {
    for (int round = 0; round < 3; round++) {
      Path root = dir.resolve("round-" + round);
      Process child =
          ChildJvm.of(PublishLoop.class, root.toString())
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("child-" + round + ".log").toFile())
              .start();
      try {
        // However long the child takes to start on a busy machine: wait for its first
        // publication, or its death.
        Path current = root.resolve("meta/CURRENT");
        while (!Files.exists(current) && child.isAlive()) {
          Thread.sleep(5);
        }
        assertTrue(
            Files.exists(current), "the child died before publishing; see its log in " + dir);
        Thread.sleep(50L + 70L * round); // land the kill somewhere in the loop
      } finally {
        child.destroyForcibly();
        child.waitFor();
      }
      try (Storage storage = StorageProviders.open(root.toString(), StorageOptions.empty())) {
        Optional<byte[]> payload = MetadataFile.read(storage, "meta/CURRENT");
        assertTrue(payload.isPresent(), "a published version must survive the kill");
        assertTrue(PublishLoop.numberOf(payload.get()) > 0, "torn payload");
        assertEquals(List.of("meta/CURRENT"), storage.list(""));
      }
    }
  }
}
