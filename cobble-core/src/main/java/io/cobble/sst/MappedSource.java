package io.cobble.sst;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A local table file whose block reads come from a read-only memory mapping ({@code
 * mmap-reads.enabled}): a block that misses the block cache is verified and decoded straight from
 * the page cache, without a {@code pread} per miss. Other reads (footer, blocks too large for a
 * direct buffer, compaction read-ahead) stay positional reads through the channel.
 *
 * <p>Touching an unmapped region crashes the JVM, so the mapping is counted: every block read
 * {@link #readDirect enters} it and {@link #doneDirect leaves} it, {@link #close} only marks it
 * closed, and whoever brings the count of a closed mapping to zero unmaps it. A read that arrives
 * after close falls back to the (closed) channel and fails as a read of a closed table does.
 */
final class MappedSource extends ChannelSource {
  /** Largest file mapped; a mapping is one buffer, and larger files keep positional reads. */
  static final long MAX_MAPPED = Integer.MAX_VALUE;

  /** Set in {@link #users} once closed; the low bits count readers inside the mapping. */
  private static final int CLOSED = 1 << 30;

  private static final Unmapper UNMAPPER = Unmapper.find();

  private final MappedByteBuffer mapping;
  private final AtomicInteger users = new AtomicInteger();
  // Each reading thread's own view of the whole mapping, made once: readers move its position
  // and limit, which a shared buffer would not allow, and a view per read would allocate.
  private final ThreadLocal<View> views = ThreadLocal.withInitial(this::newView);

  MappedSource(String name, Path path) throws IOException {
    super(name, path);
    try {
      this.mapping = channel.map(FileChannel.MapMode.READ_ONLY, 0, size());
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  /** Whether a local file of {@code size} bytes can be mapped whole. */
  static boolean fits(long size) {
    return size > 0 && size <= MAX_MAPPED;
  }

  private View newView() {
    return new View(mapping.duplicate());
  }

  /** A thread's view of the mapping, and whether the thread is inside it. */
  private static final class View {
    final ByteBuffer buffer;
    boolean entered;

    View(ByteBuffer buffer) {
      this.buffer = buffer;
    }
  }

  /**
   * The thread's view of the mapping with the {@code len} bytes at {@code position} from its
   * position, valid until {@link #doneDirect}; after close a positional read into the per-thread
   * buffer.
   */
  @Override
  ByteBuffer readDirect(int len, long position) {
    if (!enter()) {
      return super.readDirect(len, position);
    }
    View v = views.get();
    v.entered = true;
    ByteBuffer b = v.buffer;
    b.limit(b.capacity()).position((int) position);
    return b;
  }

  @Override
  void doneDirect() {
    View v = views.get();
    if (v.entered) {
      v.entered = false;
      leave();
    }
  }

  private boolean enter() {
    while (true) {
      int u = users.get();
      if ((u & CLOSED) != 0) {
        return false;
      }
      if (users.compareAndSet(u, u + 1)) {
        return true;
      }
    }
  }

  private void leave() {
    if (users.decrementAndGet() == CLOSED) {
      UNMAPPER.unmap(mapping);
    }
  }

  /** Whether the mapping has been released (closed and left by its last reader). */
  boolean unmapped() {
    return users.get() == CLOSED;
  }

  @Override
  public void close() throws IOException {
    try {
      super.close();
    } finally {
      int before = users.getAndUpdate(u -> u | CLOSED);
      if (before == 0) {
        UNMAPPER.unmap(mapping);
      }
    }
  }

  /**
   * Releases a mapping now through {@code sun.misc.Unsafe.invokeCleaner} (module jdk.unsupported);
   * where that is not available the mapping is left to the garbage collector, which unmaps it once
   * the buffer is unreachable, which the reader count already guarantees.
   */
  private static final class Unmapper {
    private final Object unsafe;
    private final Method invokeCleaner;

    private Unmapper(Object unsafe, Method invokeCleaner) {
      this.unsafe = unsafe;
      this.invokeCleaner = invokeCleaner;
    }

    static Unmapper find() {
      try {
        Class<?> c = Class.forName("sun.misc.Unsafe");
        Field f = c.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        return new Unmapper(f.get(null), c.getMethod("invokeCleaner", ByteBuffer.class));
      } catch (ReflectiveOperationException | RuntimeException e) {
        return new Unmapper(null, null);
      }
    }

    void unmap(MappedByteBuffer mapping) {
      if (invokeCleaner == null) {
        return;
      }
      try {
        invokeCleaner.invoke(unsafe, mapping);
      } catch (ReflectiveOperationException e) {
        // Left to the garbage collector, as when the method is missing.
      }
    }
  }
}
