package io.cobble.storage.file;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fsync calls really reach the file system (on Linux, where directories can be synced). */
class FileSyncTest {

  @TempDir Path dir;

  @Test
  void syncsFilesAndDirectories() throws IOException {
    FileSync sync = new FileSync(true);
    Path file = Files.write(dir.resolve("f"), new byte[] {1, 2, 3});
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      sync.file(channel);
    }
    sync.directory(dir);
  }

  @Test
  void directorySyncOpensTheDirectory() {
    // Proof that the directory path is really opened: a missing directory fails.
    assertThrows(
        NoSuchFileException.class, () -> new FileSync(true).directory(dir.resolve("gone")));
  }

  @Test
  void disabledSyncTouchesNothing() throws IOException {
    new FileSync(false).directory(dir.resolve("gone"));
  }
}
