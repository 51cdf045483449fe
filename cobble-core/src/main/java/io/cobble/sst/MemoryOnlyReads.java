package io.cobble.sst;

import io.cobble.CobbleException;

/**
 * Marks the calling thread's reads as memory-only between {@link #begin()} and {@link #end()}: a
 * block that is neither pinned nor in the block cache is not read from storage, the read ends with
 * {@link NotInMemory} instead. A caller that must not wait on storage (a task thread answering what
 * it can inline) tries such a read first and hands only the rest to threads that may wait.
 * Separated values (value-log records) count as storage reads too.
 */
public final class MemoryOnlyReads {

  private static final ThreadLocal<boolean[]> ACTIVE =
      ThreadLocal.withInitial(() -> new boolean[1]);

  private MemoryOnlyReads() {}

  /** Starts a memory-only read on this thread; pair with {@link #end()} in a finally block. */
  public static void begin() {
    ACTIVE.get()[0] = true;
  }

  public static void end() {
    ACTIVE.get()[0] = false;
  }

  /** Called before a block or a separated value is read from storage. */
  public static void checkMayReadStorage() {
    if (ACTIVE.get()[0]) {
      throw new NotInMemory();
    }
  }

  /**
   * A memory-only read needed a block from storage. Without a stack trace: it is an answer, not a
   * failure, and a storage read follows it anyway.
   */
  public static final class NotInMemory extends CobbleException {
    private static final long serialVersionUID = 1L;

    NotInMemory() {
      super("a memory-only read needed a block from storage");
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
