package io.cobble.storage;

import java.io.EOFException;

/** The bounds check every {@link StorageInput} makes before a positional read. */
public final class ReadRange {
  private ReadRange() {}

  /**
   * @throws EOFException naming {@code file} if {@code length} bytes at {@code position} do not lie
   *     within its {@code fileLength} bytes
   */
  public static void check(long position, int length, long fileLength, String file)
      throws EOFException {
    if (position < 0 || position + length > fileLength) {
      throw new EOFException(
          "Read of "
              + length
              + " bytes at "
              + position
              + " is outside "
              + file
              + " ("
              + fileLength
              + " bytes).");
    }
  }
}
