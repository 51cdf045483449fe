package io.cobble.storage.file;

import io.cobble.storage.StorageOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/** Buffered sequential writes to a new file; sync and close fsync the file and, once, its dir. */
final class FileOutput extends StorageOutput {

  private static final int BUFFER_SIZE = 64 * 1024;

  private final FileChannel channel;
  private final Path directory;
  private final FileSync sync;
  private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER_SIZE);
  private long position;
  private boolean directorySynced;
  private boolean closed;

  FileOutput(FileChannel channel, Path directory, FileSync sync) {
    this.channel = channel;
    this.directory = directory;
    this.sync = sync;
  }

  @Override
  public void write(int b) throws IOException {
    ensureOpen();
    if (!buffer.hasRemaining()) {
      drain();
    }
    buffer.put((byte) b);
    position++;
  }

  @Override
  public void write(byte[] bytes, int offset, int length) throws IOException {
    ensureOpen();
    if (length >= BUFFER_SIZE) {
      drain();
      writeFully(ByteBuffer.wrap(bytes, offset, length));
    } else {
      if (length > buffer.remaining()) {
        drain();
      }
      buffer.put(bytes, offset, length);
    }
    position += length;
  }

  @Override
  public void flush() throws IOException {
    ensureOpen();
    drain();
  }

  @Override
  public boolean sync() throws IOException {
    ensureOpen();
    drain();
    sync.file(channel);
    // The file is new: its directory entry must be durable too, but only once.
    if (!directorySynced) {
      sync.directory(directory);
      directorySynced = true;
    }
    return true;
  }

  @Override
  public long position() {
    return position;
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    try {
      sync();
    } finally {
      closed = true;
      channel.close();
    }
  }

  private void drain() throws IOException {
    buffer.flip();
    writeFully(buffer);
    buffer.clear();
  }

  private void writeFully(ByteBuffer source) throws IOException {
    while (source.hasRemaining()) {
      channel.write(source);
    }
  }

  private void ensureOpen() throws IOException {
    if (closed) {
      throw new ClosedChannelException();
    }
  }
}
