package io.cobble.storage.file;

import io.cobble.storage.ReadRange;
import io.cobble.storage.StorageInput;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/** Positional reads on a file channel; positional reads need no lock between threads. */
final class FileInput implements StorageInput {

  private final FileChannel channel;
  private final long length;
  private final String path;

  FileInput(FileChannel channel, String path) throws IOException {
    this.channel = channel;
    this.length = channel.size();
    this.path = path;
  }

  @Override
  public long length() {
    return length;
  }

  @Override
  public void readFully(long position, byte[] buffer, int offset, int length) throws IOException {
    ReadRange.check(position, length, this.length, path);
    ByteBuffer target = ByteBuffer.wrap(buffer, offset, length);
    long at = position;
    while (target.hasRemaining()) {
      int read = channel.read(target, at);
      if (read < 0) {
        throw new EOFException(path + " shrank while being read at " + at + ".");
      }
      at += read;
    }
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
