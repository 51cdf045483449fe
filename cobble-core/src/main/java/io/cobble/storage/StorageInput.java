package io.cobble.storage;

import java.io.Closeable;
import java.io.IOException;

/** A file opened for positional reads. Safe for concurrent reads at different positions. */
public interface StorageInput extends Closeable {

  /** The file length when it was opened. */
  long length();

  /**
   * Reads exactly {@code length} bytes starting at {@code position}.
   *
   * @throws java.io.EOFException if the range extends past the end of the file
   */
  void readFully(long position, byte[] buffer, int offset, int length) throws IOException;

  /**
   * Forgets any locally cached copy of the given range, so that the next read fetches it from the
   * source again. Called when cached bytes fail their checksum. Returns whether a next read can
   * return different bytes (false when nothing is cached in between).
   */
  default boolean dropCached(long position, int length) {
    return false;
  }

  /** Reads exactly {@code length} bytes starting at {@code position} into a new array. */
  default byte[] read(long position, int length) throws IOException {
    byte[] bytes = new byte[length];
    readFully(position, bytes, 0, length);
    return bytes;
  }
}
