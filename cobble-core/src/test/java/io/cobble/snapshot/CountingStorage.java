package io.cobble.snapshot;

import io.cobble.storage.ForwardingStorage;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageInput;
import io.cobble.storage.StorageOutput;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Delegates to a real storage and counts the bytes read and written through it, and the read
 * requests (ranged reads and whole-file reads).
 */
public final class CountingStorage extends ForwardingStorage {
  public final AtomicLong bytesRead = new AtomicLong();
  public final AtomicLong bytesWritten = new AtomicLong();
  public final AtomicLong reads = new AtomicLong();

  public CountingStorage(Storage delegate) {
    super(delegate);
  }

  @Override
  public StorageOutput create(String path) throws IOException {
    StorageOutput out = delegate.create(path);
    return new StorageOutput() {
      @Override
      public void write(int b) throws IOException {
        out.write(b);
        bytesWritten.incrementAndGet();
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
        bytesWritten.addAndGet(len);
      }

      @Override
      public boolean sync() throws IOException {
        return out.sync();
      }

      @Override
      public long position() {
        return out.position();
      }

      @Override
      public void close() throws IOException {
        out.close();
      }
    };
  }

  @Override
  public StorageInput open(String path) throws IOException {
    return counted(delegate.open(path));
  }

  @Override
  public StorageInput open(String path, long length) throws IOException {
    return counted(delegate.open(path, length));
  }

  private StorageInput counted(StorageInput in) {
    return new StorageInput() {
      @Override
      public long length() {
        return in.length();
      }

      @Override
      public void readFully(long position, byte[] buffer, int offset, int length)
          throws IOException {
        in.readFully(position, buffer, offset, length);
        bytesRead.addAndGet(length);
        reads.incrementAndGet();
      }

      @Override
      public void close() throws IOException {
        in.close();
      }
    };
  }

  @Override
  public byte[] readAll(String path) throws IOException {
    byte[] b = delegate.readAll(path);
    bytesRead.addAndGet(b.length);
    reads.incrementAndGet();
    return b;
  }

  @Override
  public void publishAtomically(String path, byte[] bytes) throws IOException {
    delegate.publishAtomically(path, bytes);
    bytesWritten.addAndGet(bytes.length);
  }
}
