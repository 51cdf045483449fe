package io.cobble.storage.s3;

import io.cobble.storage.ReadRange;
import io.cobble.storage.StorageInput;
import java.io.EOFException;
import java.io.IOException;

/** Positional reads as ranged GETs; each read is one bounded request. */
final class S3Input implements StorageInput {

  private final S3Storage storage;
  private final String path;
  private final long length;

  S3Input(S3Storage storage, String path, long length) {
    this.storage = storage;
    this.path = path;
    this.length = length;
  }

  @Override
  public long length() {
    return length;
  }

  @Override
  public void readFully(long position, byte[] buffer, int offset, int length) throws IOException {
    ReadRange.check(position, length, this.length, storage.describe(path));
    if (length == 0) {
      return;
    }
    byte[] bytes = storage.readRange(path, position, length);
    if (bytes.length != length) {
      throw new EOFException(
          storage.describe(path)
              + " returned "
              + bytes.length
              + " bytes for a range of "
              + length
              + " at "
              + position
              + "; the object changed after it was opened.");
    }
    System.arraycopy(bytes, 0, buffer, offset, length);
  }

  @Override
  public void close() {}
}
