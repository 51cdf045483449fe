package io.cobble.cache;

import io.cobble.storage.ForwardingStorage;
import io.cobble.storage.ReadRange;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageInput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;

/**
 * A remote storage whose positional reads go through a {@link DiskCache}: a file kept whole is read
 * locally; otherwise each read is served from cached chunks, and the missing chunks it covers are
 * fetched with one ranged read and kept, so a block read twice costs one remote request. Every
 * other call goes to the remote storage unchanged (metadata is never cached here).
 */
public final class CachedStorage extends ForwardingStorage {
  private final DiskCache cache;

  public CachedStorage(Storage remote, DiskCache cache) {
    super(remote);
    this.cache = cache;
  }

  public Storage remote() {
    return delegate;
  }

  public DiskCache cache() {
    return cache;
  }

  @Override
  public StorageInput open(String path) throws IOException {
    return open(path, -1);
  }

  @Override
  public StorageInput open(String path, long length) throws IOException {
    if (length < 0) {
      Path whole = cache.wholeFile(path);
      length = whole != null ? Files.size(whole) : delegate.length(path);
    }
    return new CachedInput(path, length);
  }

  @Override
  public void delete(String path) throws IOException {
    cache.dropAll(path);
    delegate.delete(path);
  }

  @Override
  public void deleteAll(Collection<String> paths) throws IOException {
    for (String path : paths) {
      cache.dropAll(path);
    }
    delegate.deleteAll(paths);
  }

  /** Reads of one file: whole local copy, cached chunks, or ranged reads that fill the cache. */
  private final class CachedInput implements StorageInput {
    private final String path;
    private final long length;
    private StorageInput source;
    private FileChannel local;

    CachedInput(String path, long length) {
      this.path = path;
      this.length = length;
    }

    @Override
    public long length() {
      return length;
    }

    @Override
    public void readFully(long position, byte[] buffer, int offset, int len) throws IOException {
      ReadRange.check(position, len, length, delegate.uri() + "/" + path);
      if (len == 0 || readLocal(position, buffer, offset, len)) {
        return;
      }
      int chunk = cache.chunkSize();
      long first = position / chunk;
      long last = (position + len - 1) / chunk;
      long c = first;
      while (c <= last) {
        long chunkStart = c * chunk;
        long from = Math.max(position, chunkStart);
        long to = Math.min(position + len, chunkStart + chunk);
        if (cache.readChunk(
            path,
            c,
            (int) (from - chunkStart),
            buffer,
            offset + (int) (from - position),
            (int) (to - from))) {
          c++;
          continue;
        }
        // One ranged read for the run of missing chunks starting here.
        long end = c;
        while (end < last && !cache.hasChunk(path, end + 1)) {
          end++;
        }
        long fetchFrom = chunkStart;
        long fetchTo = Math.min(length, (end + 1) * chunk);
        byte[] bytes = source().read(fetchFrom, (int) (fetchTo - fetchFrom));
        for (long k = c; k <= end; k++) {
          int at = (int) ((k - c) * chunk);
          cache.putChunk(path, k, bytes, at, (int) Math.min(chunk, bytes.length - at));
        }
        long copyFrom = Math.max(position, fetchFrom);
        long copyTo = Math.min(position + len, fetchTo);
        System.arraycopy(
            bytes,
            (int) (copyFrom - fetchFrom),
            buffer,
            offset + (int) (copyFrom - position),
            (int) (copyTo - copyFrom));
        c = end + 1;
      }
    }

    /** Reads from the whole-file copy while the cache keeps it. */
    private boolean readLocal(long position, byte[] buffer, int offset, int len)
        throws IOException {
      Path whole = cache.wholeFile(path);
      FileChannel ch;
      synchronized (this) {
        if (whole == null) {
          closeLocal();
          return false;
        }
        if (local == null) {
          try {
            local = FileChannel.open(whole, StandardOpenOption.READ);
          } catch (NoSuchFileException e) {
            return false;
          }
        }
        ch = local;
      }
      ByteBuffer bb = ByteBuffer.wrap(buffer, offset, len);
      try {
        while (bb.hasRemaining()) {
          if (ch.read(bb, position + (bb.position() - offset)) < 0) {
            return false;
          }
        }
      } catch (ClosedChannelException e) {
        // Dropped or evicted meanwhile (or the thread was interrupted): read the chunks instead.
        synchronized (this) {
          if (local == ch) {
            local = null;
          }
        }
        return false;
      }
      return true;
    }

    private synchronized StorageInput source() throws IOException {
      if (source == null) {
        source = delegate.open(path, length);
      }
      return source;
    }

    @Override
    public boolean dropCached(long position, int len) {
      int chunk = cache.chunkSize();
      cache.drop(path, position / chunk, (position + Math.max(len, 1) - 1) / chunk);
      synchronized (this) {
        closeLocal();
      }
      return true;
    }

    private void closeLocal() {
      if (local != null) {
        try {
          local.close();
        } catch (IOException ignored) {
          // Read-only channel: nothing is lost.
        }
        local = null;
      }
    }

    @Override
    public synchronized void close() throws IOException {
      closeLocal();
      if (source != null) {
        source.close();
      }
    }
  }
}
