package io.cobble;

import io.cobble.cache.BlockCache;
import io.cobble.compaction.OutputWriter;
import io.cobble.memtable.MemTable;
import io.cobble.row.Layouts;
import io.cobble.row.RowState;
import io.cobble.util.ByteReader;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import io.cobble.version.Version;
import io.cobble.version.VersionEdit;
import io.cobble.version.WriterFencedException;
import io.cobble.vlog.ValueLogFile;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Turns sealed memtables into L0 tables, oldest first, on the shard's flush thread: rotates the
 * active memtable, writes one table per family it holds, installs them and hands the resulting
 * version to the snapshots sealed on that memtable. A failed flush to a remote primary leaves the
 * memtable in place for a retry; any other failure disables writes.
 */
final class Flusher {
  private final ShardState state;
  private final CompactionScheduler compactions;
  private final ExecutorService executor;
  // The last failure of a flush to a remote primary. Such a failure leaves the memtable in place
  // for the next flush to retry instead of disabling the Db; a successful flush clears it. Under
  // the mutex.
  private Throwable failure;
  private long failures;
  private boolean scheduled;
  // Snapshots waiting for a sealed memtable's flush, completed with the version that installed it.
  // Under the mutex.
  private final Map<MemTable, List<CompletableFuture<Version>>> sealWaiters =
      new IdentityHashMap<>();

  private final AtomicLong flushes = new AtomicLong();
  // Told when a flush frees memtable memory; null unless the Db shares a MemoryPool.
  private volatile MemoryPool pool;
  // The Db's own cache, lent the memtable buffers no sealed memtable holds; null with a pool, whose
  // cache the pool lends to, or with a cache other Dbs share.
  private volatile BlockCache lendingTo;
  // The active memtable's size past which a write shrinks the loan (see writing).
  private volatile long lendBoundary = Long.MAX_VALUE;
  private final AtomicLong bytes = new AtomicLong();

  Flusher(ShardState state, CompactionScheduler compactions) {
    this.state = state;
    this.compactions = compactions;
    this.executor = Executors.newSingleThreadExecutor(ShardState.daemon("cobble-flush"));
  }

  long flushes() {
    return flushes.get();
  }

  long bytes() {
    return bytes.get();
  }

  /**
   * The failure of the last flush, when it failed and no retry is scheduled while sealed memtables
   * wait: writes that need room then fail instead of waiting. Under the mutex.
   */
  Throwable stuckFailure() {
    if (failure != null && !scheduled && !state.versions.current().immutables().isEmpty()) {
      return failure;
    }
    return null;
  }

  /** Seals the active memtable and schedules its flush. Under the mutex. */
  void rotateMemTable() {
    Version v = state.versions.current();
    MemTable old = v.active();
    old.seal();
    state.noteSealed(old);
    List<MemTable> imms = new ArrayList<>();
    imms.add(old);
    imms.addAll(v.immutables());
    state.versions.apply(new VersionEdit().memtables(state.newMemTable(), imms));
    lendIdle();
    schedule();
  }

  /**
   * Seals the active memtable when it holds data and the buffer count leaves room for one more
   * sealed memtable; false when it did nothing. Under the mutex.
   */
  boolean rotateIfRoom() {
    Version v = state.versions.current();
    if (v.active().entryCount() == 0
        || v.immutables().size() >= state.config.memtableBufferCount() - 1) {
      return false;
    }
    rotateMemTable();
    return true;
  }

  /**
   * Lends {@code cache}, the Db's own, what the memtables leave of their buffers (capacity × buffer
   * count) less one step of headroom, in steps of a sixteenth, as a pool lends its write budget
   * ({@link MemoryPool}): a Db that is read and seldom written caches in its whole memory. The loan
   * shrinks, evicting at once, when a memtable is sealed and as the active one grows into the
   * headroom ({@link #writing}), and grows back when a flush drops one.
   */
  void lendIdleBuffers(BlockCache cache) {
    this.lendingTo = cache;
    lendIdle();
  }

  /**
   * Called before each write with the active memtable's size: takes a step of the loan back once
   * the active memtable has grown into the headroom the loan leaves, so memtables and cache stay
   * within the Db's memory.
   */
  void writing(long activeBytes) {
    if (activeBytes > lendBoundary) {
      lendIdle();
    }
  }

  private void lendIdle() {
    BlockCache cache = lendingTo;
    if (cache == null) {
      return;
    }
    // Writer and flush thread both lend: each reads the version inside the lock, so the last loan
    // is the one of the latest version.
    synchronized (cache) {
      Version v = state.versions.current();
      long buffers = state.config.memtableBufferCount() * state.config.memtableCapacity();
      long step = Math.max(1, buffers / 16);
      long sealed = v.sealedBytes();
      long idle = buffers - v.active().approximateBytes() - sealed - step;
      long loan = idle <= 0 ? 0 : idle / step * step;
      if (loan != cache.lent()) {
        cache.lend(loan);
      }
      // The active memtable may grow until memtables and loan leave one step of the buffers: past
      // that, the next write takes a step back. With nothing lent there is nothing to take back
      // until a seal or flush lends again.
      lendBoundary = loan == 0 ? Long.MAX_VALUE : buffers - sealed - loan - step;
    }
  }

  /** Tells {@code pool} whenever a flush frees memtable memory. */
  void sharing(MemoryPool pool) {
    this.pool = pool;
  }

  /** Runs {@code task} on the flush thread, after the flushes queued before it. */
  void execute(Runnable task) {
    executor.execute(task);
  }

  /** Starts the flush loop unless it runs. Under the mutex. */
  void schedule() {
    if (!scheduled) {
      scheduled = true;
      executor.execute(this::flushLoop);
    }
  }

  /** Seals the active memtable (if not empty) and waits until every memtable is flushed. */
  void flushAll() {
    state.mutex.lock();
    try {
      long seen = failures;
      if (state.versions.current().active().entryCount() > 0) {
        while (state.versions.current().immutables().size()
            >= state.config.memtableBufferCount() - 1) {
          state.checkBackground();
          checkFailure(seen);
          schedule();
          state.awaitChange();
        }
        rotateMemTable();
      }
      while (!state.versions.current().immutables().isEmpty()) {
        state.checkBackground();
        checkFailure(seen);
        schedule();
        state.awaitChange();
      }
    } finally {
      state.mutex.unlock();
    }
  }

  /** See {@link Db#sealForSnapshot()}. */
  CompletableFuture<Version> sealForSnapshot() {
    state.mutex.lock();
    try {
      state.checkBackground();
      if (state.versions.current().active().entryCount() > 0) {
        // May exceed memtable.buffer-count by one; writers stall until the flush catches up.
        rotateMemTable();
      }
      List<MemTable> imms = state.versions.current().immutables();
      if (imms.isEmpty()) {
        return CompletableFuture.completedFuture(state.versions.acquire());
      }
      CompletableFuture<Version> sealed = new CompletableFuture<>();
      sealWaiters.computeIfAbsent(imms.get(0), k -> new ArrayList<>()).add(sealed);
      schedule();
      return sealed;
    } finally {
      state.mutex.unlock();
    }
  }

  private void flushLoop() {
    while (true) {
      MemTable imm;
      state.mutex.lock();
      try {
        List<MemTable> imms = state.versions.current().immutables();
        Throwable bg = state.backgroundError();
        if (imms.isEmpty() || bg != null) {
          scheduled = false;
          if (bg != null) {
            failSealWaiters(bg);
          }
          state.changed.signalAll();
          return;
        }
        imm = imms.get(imms.size() - 1);
      } finally {
        state.mutex.unlock();
      }
      try {
        flush(imm);
        MemoryPool shared = pool;
        if (shared != null) {
          shared.freed();
        }
        lendIdle();
      } catch (Throwable t) {
        state.mutex.lock();
        try {
          if (retryable(t)) {
            failure = t;
            failures++;
          } else {
            state.failBackground(t);
          }
          scheduled = false;
          failSealWaiters(t);
          state.changed.signalAll();
        } finally {
          state.mutex.unlock();
        }
        return;
      }
    }
  }

  /**
   * Whether a failed flush may be retried: one to a remote primary whose volume failed (nothing was
   * installed, the memtable is still there), but not one of a writer another writer fenced off.
   */
  private boolean retryable(Throwable t) {
    if (state.remote == null || !(t instanceof RuntimeException)) {
      return false;
    }
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof WriterFencedException) {
        return false;
      }
    }
    return true;
  }

  /** Throws the flush failure recorded after {@code seen} failures. Under the mutex. */
  private void checkFailure(long seen) {
    if (failures != seen) {
      throw new CobbleException(
          "flush to "
              + state.remote.storage().uri()
              + " failed: "
              + failure.getMessage()
              + "; the data stays in memory and the next flush retries it",
          failure);
    }
  }

  /** Writes one L0 table per family present in the memtable, then installs them. */
  private void flush(MemTable imm) {
    Layouts l = state.layouts();
    List<FileMeta> outputs = new ArrayList<>();
    List<OutputWriter> writers = new ArrayList<>();
    long written = 0;
    try {
      imm.forEachRow(new FlushRows(l, writers));
      VersionEdit edit = new VersionEdit();
      for (OutputWriter w : writers) {
        for (FileMeta f : w.finish()) {
          outputs.add(f);
          edit.add(0, f);
        }
        for (ValueLogFile f : w.vlogs()) {
          state.upload(f.number(), true);
          edit.addVlog(f);
        }
        written += w.bytesWritten();
      }
      state.mutex.lock();
      try {
        List<MemTable> imms = new ArrayList<>(state.versions.current().immutables());
        imms.remove(imm);
        edit.memtables(null, imms);
        state.versions.apply(edit);
        failure = null;
        completeSealWaiters(imm);
        flushes.incrementAndGet();
        bytes.addAndGet(written);
        state.changed.signalAll();
        compactions.maybeSchedule();
      } finally {
        state.mutex.unlock();
      }
    } catch (RuntimeException e) {
      for (OutputWriter w : writers) {
        w.close();
      }
      Map<Long, Boolean> discarded = new HashMap<>();
      for (FileMeta f : outputs) {
        f.table().close();
        ShardState.deleteQuietly(state.versions.tablePath(f.number()));
        discarded.put(f.number(), false);
      }
      for (OutputWriter w : writers) {
        for (ValueLogFile f : w.vlogs()) {
          ShardState.deleteQuietly(state.versions.vlogPath(f.number()));
          discarded.put(f.number(), true);
        }
      }
      if (state.remote != null) {
        state.remote.discard(discarded);
      }
      throw e;
    }
  }

  /**
   * Writes the memtable's rows, read in place, into one output per family (the key's first two
   * bytes), under the key without them.
   */
  private final class FlushRows implements MemTable.RowVisitor {
    private final Layouts layouts;
    private final List<OutputWriter> writers;
    private final RowState scratch = new RowState();
    private final ByteReader reader = new ByteReader();
    private OutputWriter out;
    private int family = -1;

    FlushRows(Layouts layouts, List<OutputWriter> writers) {
      this.layouts = layouts;
      this.writers = writers;
    }

    @Override
    public void accept(byte[] key, int keyOff, int keyLen, byte[] row, int rowOff, int rowLen) {
      int fam = Bytes.getShort(key, keyOff);
      if (fam != family) {
        family = fam;
        out = state.outputWriter(fam, 0, Long.MAX_VALUE);
        writers.add(out);
      }
      out.addEncoded(
          key, keyOff + 2, keyLen - 2, layouts.byId(fam), row, rowOff, rowLen, scratch, reader);
    }
  }

  /**
   * Hands the version that installed {@code flushed} to the snapshots sealed on it. Under mutex.
   */
  private void completeSealWaiters(MemTable flushed) {
    List<CompletableFuture<Version>> waiting = sealWaiters.remove(flushed);
    if (waiting == null) {
      return;
    }
    for (CompletableFuture<Version> sealed : waiting) {
      Version pinned = state.versions.acquire();
      if (!sealed.complete(pinned)) {
        pinned.unref();
      }
    }
  }

  /** Fails every snapshot waiting for a flush. Under the mutex. */
  void failSealWaiters(Throwable cause) {
    for (List<CompletableFuture<Version>> waiting : sealWaiters.values()) {
      for (CompletableFuture<Version> sealed : waiting) {
        sealed.completeExceptionally(
            new CobbleException(
                "the flush a snapshot of " + state.dir + " waited for failed", cause));
      }
    }
    sealWaiters.clear();
  }

  void shutdown() {
    executor.shutdownNow();
  }
}
