package io.cobble.util;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reads that bypass the page cache ({@code O_DIRECT}). Offsets and lengths are widened to the file
 * system's block alignment and read into aligned direct buffers taken from a bounded pool ({@code
 * direct-io.buffer-size}, {@code direct-io.pool-max-size}); reads larger than a pooled buffer use a
 * one-off buffer. {@link #open} returns null where the file system refuses direct I/O, and callers
 * fall back to ordinary reads.
 */
public final class DirectIo {
  private final int bufferSize;
  private final int maxPooled;
  private final ConcurrentLinkedQueue<ByteBuffer> pool = new ConcurrentLinkedQueue<>();
  private final AtomicInteger pooled = new AtomicInteger();

  public DirectIo(int bufferSize, int maxPooled) {
    this.bufferSize = bufferSize;
    this.maxPooled = maxPooled;
  }

  /** Opens a file for direct reads, or returns null when direct I/O is not possible there. */
  public Reader open(Path file) {
    try {
      int align = (int) Files.getFileStore(file).getBlockSize();
      if (align <= 0 || Integer.bitCount(align) != 1) {
        return null;
      }
      FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, ExtendedOpenOption.DIRECT);
      return new Reader(ch, align);
    } catch (IOException | UnsupportedOperationException e) {
      return null;
    }
  }

  private int pooledCapacity(int align) {
    return roundUp(Math.max(bufferSize, align), align);
  }

  private static ByteBuffer aligned(int size, int align) {
    ByteBuffer b = ByteBuffer.allocateDirect(size + align).alignedSlice(align);
    b.limit(size);
    return b.slice();
  }

  private ByteBuffer acquire(int size, int align) {
    int capacity = pooledCapacity(align);
    if (size > capacity) {
      return aligned(size, align);
    }
    ByteBuffer b = pool.poll();
    if (b != null) {
      pooled.decrementAndGet();
      if (b.capacity() >= size && b.alignmentOffset(0, align) == 0) {
        return b;
      }
    }
    return aligned(capacity, align);
  }

  private void release(ByteBuffer b, int align) {
    if (b.capacity() != pooledCapacity(align)) {
      return;
    }
    if (pooled.incrementAndGet() <= maxPooled) {
      pool.offer(b);
    } else {
      pooled.decrementAndGet();
    }
  }

  /** Number of buffers waiting in the pool. */
  public int pooledBuffers() {
    return pooled.get();
  }

  private static int roundUp(int n, int align) {
    return (n + align - 1) & -align;
  }

  /** Positional direct reads of one file; thread-safe. */
  public final class Reader implements AutoCloseable {
    private final FileChannel channel;
    private final int align;

    Reader(FileChannel channel, int align) {
      this.channel = channel;
      this.align = align;
    }

    /** Reads {@code len} bytes at {@code position} into {@code dst}; false at end of file. */
    public boolean read(byte[] dst, int len, long position) throws IOException {
      long start = position & -(long) align;
      int head = (int) (position - start);
      int span = roundUp(head + len, align);
      ByteBuffer b = acquire(span, align);
      try {
        b.clear().limit(span);
        while (b.position() < head + len) {
          // A short, unaligned read means end of file: direct reads cannot resume from there.
          if (channel.read(b, start + b.position()) <= 0 || b.position() % align != 0) {
            if (b.position() >= head + len) {
              break;
            }
            return false;
          }
        }
        b.flip().position(head);
        b.get(dst, 0, len);
        return true;
      } finally {
        release(b, align);
      }
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }
}
