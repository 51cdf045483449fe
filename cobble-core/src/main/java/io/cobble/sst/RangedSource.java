package io.cobble.sst;

import io.cobble.storage.StorageInput;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A table file on remote storage, read in place with ranged reads. Opening a table reads footer,
 * properties and top-level index from its end: {@link #holdTail} fetches that end in one request
 * and serves those reads from it.
 */
final class RangedSource extends BlockSource {
  private final StorageInput input;
  private final long size;
  // The end of the file while the table opens; null otherwise.
  private volatile byte[] tail;
  private long tailStart;

  RangedSource(String name, StorageInput input) {
    super(name);
    this.input = input;
    this.size = input.length();
  }

  @Override
  Path localPath() {
    return null;
  }

  @Override
  long size() {
    return size;
  }

  @Override
  void holdTail(int bytes) {
    int n = (int) Math.min(size, bytes);
    byte[] t = new byte[n];
    readFully(t, n, size - n);
    tailStart = size - n;
    tail = t;
  }

  @Override
  void releaseTail() {
    tail = null;
  }

  @Override
  void readFully(byte[] dst, int len, long position) {
    byte[] t = tail;
    if (t != null && position >= tailStart) {
      System.arraycopy(t, (int) (position - tailStart), dst, 0, len);
      return;
    }
    try {
      input.readFully(position, dst, 0, len);
    } catch (IOException e) {
      throw readError(e);
    }
  }

  @Override
  boolean dropCached(long position, int len) {
    // The tail fetched at open may hold the damaged bytes as well.
    tail = null;
    return input.dropCached(position, len);
  }

  @Override
  public void close() throws IOException {
    input.close();
  }
}
