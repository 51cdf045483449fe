package io.cobble.storage.file;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * fsync of files and directories. A new or renamed file survives a crash only once the directory
 * entry naming it is synced too, which Java exposes only by opening the directory as a channel.
 */
final class FileSync {

  // Windows cannot open a directory as a channel; NTFS journals directory entries itself.
  private static final boolean DIRECTORIES_SYNCABLE =
      !System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows");

  private final boolean enabled;

  FileSync(boolean enabled) {
    this.enabled = enabled;
  }

  boolean enabled() {
    return enabled;
  }

  void file(FileChannel channel) throws IOException {
    if (enabled) {
      channel.force(true);
    }
  }

  void directory(Path directory) throws IOException {
    if (enabled && DIRECTORIES_SYNCABLE) {
      try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
        channel.force(true);
      }
    }
  }
}
