package io.cobble.sst;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A local table file read with positional reads through the page cache. Block reads land in a
 * per-thread direct buffer: a heap buffer would make the JDK read into its own temporary direct
 * buffer and copy, while checksum and LZ4 run on the direct bytes as they are.
 */
class ChannelSource extends BlockSource {
  /** Largest read into the per-thread direct buffer; bigger ones go to heap arrays. */
  static final int MAX_DIRECT = 256 << 10;

  private static final ThreadLocal<ByteBuffer[]> DIRECT =
      ThreadLocal.withInitial(() -> new ByteBuffer[] {ByteBuffer.allocateDirect(8 << 10)});

  private final Path path;
  final FileChannel channel;
  private final long size;

  ChannelSource(String name, Path path) throws IOException {
    super(name);
    this.path = path;
    this.channel = FileChannel.open(path, StandardOpenOption.READ);
    try {
      this.size = channel.size();
    } catch (IOException e) {
      channel.close();
      throw e;
    }
  }

  @Override
  Path localPath() {
    return path;
  }

  @Override
  long size() {
    return size;
  }

  @Override
  void readFully(byte[] dst, int len, long position) {
    fill(ByteBuffer.wrap(dst, 0, len), position);
  }

  @Override
  final void readSequential(byte[] dst, int len, long position) {
    fill(ByteBuffer.wrap(dst, 0, len), position);
  }

  @Override
  ByteBuffer readDirect(int len, long position) {
    if (len > MAX_DIRECT) {
      return null;
    }
    ByteBuffer[] holder = DIRECT.get();
    ByteBuffer b = holder[0];
    if (b.capacity() < len) {
      b = ByteBuffer.allocateDirect(Math.max(len, Math.min(MAX_DIRECT, b.capacity() * 2)));
      holder[0] = b;
    }
    b.clear().limit(len);
    fill(b, position);
    b.flip();
    return b;
  }

  /** Fills {@code bb} (position to limit) from the file at {@code position}. */
  private void fill(ByteBuffer bb, long position) {
    int len = bb.remaining();
    int start = bb.position();
    try {
      while (bb.hasRemaining()) {
        if (channel.read(bb, position + bb.position() - start) < 0) {
          throw shortRead(len, position);
        }
      }
    } catch (IOException e) {
      throw readError(e);
    }
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
