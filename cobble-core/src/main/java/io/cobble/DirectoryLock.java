package io.cobble;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** The exclusive lock on a Db directory's {@code LOCK} file: one open Db per directory. */
final class DirectoryLock implements AutoCloseable {
  static final String FILE_NAME = "LOCK";

  private final FileChannel channel;
  private final FileLock lock;

  private DirectoryLock(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /** Creates {@code dir} if needed and locks it; fails if another Db holds it. */
  static DirectoryLock acquire(Path dir) {
    FileChannel channel;
    try {
      Files.createDirectories(dir);
      channel =
          FileChannel.open(
              dir.resolve(FILE_NAME), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new CobbleException("cannot open Db directory " + dir, e);
    }
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (IOException | OverlappingFileLockException e) {
      closeQuietly(channel);
      throw new CobbleException("Db directory " + dir + " is already open (LOCK is held)", e);
    }
    if (lock == null) {
      closeQuietly(channel);
      throw new CobbleException("Db directory " + dir + " is already open by another process");
    }
    return new DirectoryLock(channel, lock);
  }

  @Override
  public void close() {
    try {
      lock.release();
    } catch (IOException ignored) {
      // The channel close below releases it as well.
    }
    closeQuietly(channel);
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // Best effort: closing releases the lock.
    }
  }
}
