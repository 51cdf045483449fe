package io.cobble.sst;

import io.cobble.util.DirectIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A local table file whose block reads bypass the page cache ({@code direct-io.enabled}); large
 * sequential reads (compaction read-ahead) still go through it.
 */
final class DirectIoSource extends ChannelSource {
  private final DirectIo.Reader direct;

  DirectIoSource(String name, Path path, DirectIo directIo) throws IOException {
    super(name, path);
    try {
      this.direct = directIo.open(path);
    } catch (RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  @Override
  void readFully(byte[] dst, int len, long position) {
    try {
      if (!direct.read(dst, len, position)) {
        throw shortRead(len, position);
      }
    } catch (IOException e) {
      throw readError(e);
    }
  }

  @Override
  ByteBuffer readDirect(int len, long position) {
    return null;
  }

  @Override
  public void close() throws IOException {
    try {
      direct.close();
    } finally {
      super.close();
    }
  }
}
