package io.cobble;

import io.cobble.compaction.CleanupHold;
import io.cobble.compaction.Compaction;
import io.cobble.compaction.CompactionAbandoned;
import io.cobble.compaction.CompactionJob;
import io.cobble.compaction.CompactionPicker;
import io.cobble.compaction.CompactionSplit;
import io.cobble.compaction.OutputWriter;
import io.cobble.compaction.OwnedBuckets;
import io.cobble.row.ColumnLayout;
import io.cobble.version.FileMeta;
import io.cobble.version.Version;
import io.cobble.version.VersionEdit;
import io.cobble.vlog.ValueLogFile;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.IntPredicate;

/**
 * Which tree compacts when, on the shard's compaction threads: at most one compaction per tree
 * (family) at a time, picked by the {@link CompactionPicker}, run as a {@link CompactionJob} and
 * installed as one version edit. Also runs the manual and the bucket-filtering rewrites, and holds
 * every tree still while bucket expansion rearranges levels.
 */
final class CompactionScheduler {
  /** Compaction copies values out of value logs whose live share fell below this. */
  private static final double VLOG_REWRITE_RATIO = 0.5;

  private final ShardState state;
  private final CompactionPicker picker;
  private final CleanupHold cleanupHold;
  private final ExecutorService executor;
  // Families with a compaction (or a hold) in progress. Under the mutex.
  private final Set<Integer> compacting = new HashSet<>();
  private int running;
  // Set by stop(): nothing is scheduled any more (a frozen Db). Under the mutex.
  private boolean stopped;
  // Set when scans sealed the memtable of a shard whose writes stopped (see settleLevel0). Under
  // the mutex.
  private boolean settling;

  private final AtomicLong compactions = new AtomicLong();
  private final AtomicLong trivialMoves = new AtomicLong();
  private final AtomicLong expiredDrops = new AtomicLong();
  private final AtomicLong bytesIn = new AtomicLong();
  private final AtomicLong bytesOut = new AtomicLong();

  CompactionScheduler(ShardState state) {
    this.state = state;
    this.picker = new CompactionPicker(state.config);
    // Files read in place: those of another snapshot's volume, and on a remote primary the
    // checkpoint files it serves under their adopted names.
    this.cleanupHold =
        new CleanupHold(
            n ->
                state.versions.isExternal(n)
                    || (state.remote != null && state.remote.isAdopted(n)));
    this.executor =
        Executors.newFixedThreadPool(
            state.config.compactionThreads(), ShardState.daemon("cobble-compaction"));
  }

  long compactions() {
    return compactions.get();
  }

  long trivialMoves() {
    return trivialMoves.get();
  }

  long expiredDrops() {
    return expiredDrops.get();
  }

  long bytesIn() {
    return bytesIn.get();
  }

  long bytesOut() {
    return bytesOut.get();
  }

  /**
   * Folds every tree's level 0 into level 1 once the memtable scans just sealed is flushed, unless
   * writes resume first. Scans seal a memtable only when the shard stopped being written (see
   * {@code AdaptiveMemTable}); the files its last flushes left in level 0, fewer than {@code
   * l0-file-limit}, would otherwise stay there while it is only read, and every scan of a key they
   * hold would merge them with level 1 instead of reading one source. Under the mutex.
   */
  void settleLevel0() {
    settling = true;
    maybeSchedule();
  }

  /** Starts due compactions for idle trees. Under the mutex. */
  void maybeSchedule() {
    if (stopped || state.closed() || state.backgroundError() != null) {
      return;
    }
    Version v = state.versions.current();
    if (settling
        && (v.active().entryCount() > 0 || (v.immutables().isEmpty() && level0Folded(v)))) {
      // Written again, the usual policy decides; or folded.
      settling = false;
    }
    // While the sealed memtable flushes, its flush schedules again when it is done.
    boolean folding = settling && v.immutables().isEmpty();
    for (int fam = 0; fam < v.trees().size(); fam++) {
      if (compacting.contains(fam) || state.layouts().byId(fam) == null) {
        continue;
      }
      Compaction picked = picker.pick(v, fam, state.clock.nowMillis(), owned(), cleanupHold);
      Compaction c =
          picked == null && folding
              ? picker.pickLevel0(v, fam, state.clock.nowMillis(), owned())
              : picked;
      if (c == null) {
        continue;
      }
      compacting.add(fam);
      running++;
      executor.execute(() -> runInBackground(c));
    }
  }

  private boolean level0Folded(Version v) {
    for (int fam = 0; fam < v.trees().size(); fam++) {
      if (state.layouts().byId(fam) != null && !v.tree(fam).level(0).isEmpty()) {
        return false;
      }
    }
    return true;
  }

  private void runInBackground(Compaction c) {
    try {
      run(c, false, () -> false);
    } catch (CompactionAbandoned abandoned) {
      // The Db is closing; the tree stays as it was and the next open compacts it again.
    } catch (Throwable t) {
      state.mutex.lock();
      try {
        state.failBackground(t);
      } finally {
        state.mutex.unlock();
      }
    } finally {
      state.mutex.lock();
      try {
        compacting.remove(c.family());
        running--;
        state.changed.signalAll();
        maybeSchedule();
      } finally {
        state.mutex.unlock();
      }
    }
  }

  /**
   * Executes a compaction whose tree is marked as compacting, and installs the result; abandons it
   * when the Db closes or {@code stop} says so. {@code manual}: a caller waits for it.
   */
  private void run(Compaction c, boolean manual, BooleanSupplier stop) {
    VersionEdit edit = new VersionEdit();
    boolean cleanup = c.kind() == Compaction.Kind.CLEANUP;
    if (!cleanup) {
      for (FileMeta f : c.allInputs()) {
        edit.remove(f);
      }
    }
    long out = 0;
    if (c.kind() == Compaction.Kind.TRIVIAL_MOVE) {
      edit.add(c.outputLevel(), c.inputs().get(0));
    } else if (c.kind() == Compaction.Kind.MERGE || cleanup) {
      out = merge(c, manual, edit, stop);
    }
    state.mutex.lock();
    try {
      state.versions.apply(edit);
      switch (c.kind()) {
        case TRIVIAL_MOVE:
          trivialMoves.incrementAndGet();
          break;
        case DROP_EXPIRED:
          expiredDrops.incrementAndGet();
          break;
        default:
          compactions.incrementAndGet();
          bytesIn.addAndGet(c.inputBytes());
          bytesOut.addAndGet(out);
          break;
      }
      state.changed.signalAll();
    } finally {
      state.mutex.unlock();
    }
  }

  /**
   * Writes the merge's (or cleanup's) outputs into {@code edit} and returns the bytes written. A
   * merge runs as key ranges in parallel ({@link CompactionSplit}) on this thread and the pool's:
   * this thread runs every part no pool thread has started, so no part waits for a free thread. On
   * any failure every part stops and nothing written is kept.
   */
  private long merge(Compaction c, boolean manual, VersionEdit edit, BooleanSupplier stop) {
    boolean cleanup = c.kind() == Compaction.Kind.CLEANUP;
    ColumnLayout layout = state.layouts().byId(c.family());
    // An L0 file is replaced where it lies, by files that must not overlap each other.
    long target = cleanup && c.outputLevel() == 0 ? Long.MAX_VALUE : state.config.targetFileSize();
    OwnedBuckets owned = owned();
    Version v = state.versions.current();
    List<Compaction> parts = CompactionSplit.of(c, CompactionSplit.parts(c, manual, state.config));
    AtomicBoolean failed = new AtomicBoolean();
    List<OutputWriter> writers = new ArrayList<>(parts.size());
    List<FutureTask<Void>> tasks = new ArrayList<>(parts.size());
    try {
      for (Compaction part : parts) {
        OutputWriter w = state.outputWriter(c.family(), c.outputLevel(), target).cutAt(owned);
        writers.add(w);
        CompactionJob job =
            new CompactionJob(
                    part,
                    layout,
                    state.loader,
                    readAhead(),
                    n -> v.vlogLiveRatio(n) < VLOG_REWRITE_RATIO,
                    owned::owns)
                .abandonWhen(() -> state.closed() || stop.getAsBoolean() || failed.get())
                .filterWith(state.compactionFilter);
        tasks.add(
            new FutureTask<>(
                () -> {
                  try {
                    job.run(w);
                    return null;
                  } catch (Throwable t) {
                    failed.set(true);
                    throw t;
                  }
                }));
      }
      for (int i = 1; i < tasks.size(); i++) {
        try {
          executor.execute(tasks.get(i));
        } catch (RejectedExecutionException shutDown) {
          // Run below by this thread.
        }
      }
      for (FutureTask<Void> t : tasks) {
        t.run();
      }
      rethrowFirstFailure(tasks);
      for (OutputWriter w : writers) {
        List<FileMeta> outputs = w.finish();
        if (cleanup) {
          edit.replace(c.inputs().get(0), outputs);
        } else {
          for (FileMeta f : outputs) {
            edit.add(c.outputLevel(), f);
          }
        }
      }
    } catch (RuntimeException | Error e) {
      failed.set(true);
      awaitAll(tasks);
      for (OutputWriter w : writers) {
        for (FileMeta f : w.abandon()) {
          f.table().close();
          ShardState.deleteQuietly(state.versions.tablePath(f.number()));
        }
      }
      throw e;
    } finally {
      for (OutputWriter w : writers) {
        w.close();
      }
    }
    long out = 0;
    for (OutputWriter w : writers) {
      for (ValueLogFile f : w.vlogs()) {
        state.upload(f.number(), true);
        edit.addVlog(f);
      }
      out += w.bytesWritten();
    }
    return out;
  }

  /**
   * Throws the first part's failure that is not an abandonment (the other parts abandon once one
   * fails), else an abandonment if any.
   */
  private static void rethrowFirstFailure(List<FutureTask<Void>> tasks) {
    Throwable first = null;
    for (FutureTask<Void> t : tasks) {
      Throwable cause = outcome(t);
      if (cause != null && (first == null || first instanceof CompactionAbandoned)) {
        first = cause;
      }
    }
    if (first instanceof RuntimeException) {
      throw (RuntimeException) first;
    }
    if (first instanceof Error) {
      throw (Error) first;
    }
    if (first != null) {
      throw new CobbleException("compaction failed: " + first.getMessage(), first);
    }
  }

  /** Waits for every started part to end, so that none still writes what is being deleted. */
  private static void awaitAll(List<FutureTask<Void>> tasks) {
    for (FutureTask<Void> t : tasks) {
      t.run();
      outcome(t);
    }
  }

  /** Waits for {@code t} without being interruptible; its failure, or null. */
  private static Throwable outcome(FutureTask<Void> t) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          t.get();
          return null;
        } catch (ExecutionException e) {
          return e.getCause();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private OwnedBuckets owned() {
    return new OwnedBuckets(state.ownership.ranges());
  }

  private int readAhead() {
    return state.config.readAheadEnabled() ? state.config.readAheadSize() : 1;
  }

  /**
   * Compacts every tree until each lives in a single level and no file holds buckets the shard gave
   * up; the memtables are flushed.
   */
  void compactAll() {
    runManual((v, fam) -> picker.pickManual(v, fam, state.clock.nowMillis(), owned()), () -> false);
  }

  /**
   * Merges every tree's L0 files into L1, in the caller's thread; returns false when {@code stop}
   * (polled while rows merge) or the Db's close abandoned a merge, which then installed nothing.
   */
  boolean compactLevel0(BooleanSupplier stop) {
    try {
      runManual((v, fam) -> picker.pickLevel0(v, fam, state.clock.nowMillis(), owned()), stop);
      return true;
    } catch (CompactionAbandoned abandoned) {
      return false;
    }
  }

  /**
   * Ends the cleanup hold of the files {@code numbers} the shard read in place: a durable snapshot
   * of its own names them. Background cleanup may rewrite them from now on.
   */
  void confirmOwned(Collection<Long> numbers) {
    cleanupHold.release(numbers);
    state.mutex.lock();
    try {
      maybeSchedule();
    } finally {
      state.mutex.unlock();
    }
  }

  /** Rewrites every file whose span crosses a bucket the shard does not own. */
  void cleanupForeignBuckets() {
    runManual((v, fam) -> picker.pickCleanup(v, fam, owned()), () -> false);
  }

  /** Runs what {@code next} picks for each tree, in the caller's thread, until it picks nothing. */
  private void runManual(BiFunction<Version, Integer, Compaction> next, BooleanSupplier stop) {
    for (int fam = 0; fam < state.layouts().familySlots(); fam++) {
      while (true) {
        Compaction c;
        state.mutex.lock();
        try {
          while (compacting.contains(fam)) {
            state.awaitChange();
          }
          c = next.apply(state.versions.current(), fam);
          if (c == null) {
            break;
          }
          compacting.add(fam);
          running++;
        } finally {
          state.mutex.unlock();
        }
        try {
          run(c, true, stop);
        } finally {
          state.mutex.lock();
          try {
            compacting.remove(fam);
            running--;
            state.changed.signalAll();
          } finally {
            state.mutex.unlock();
          }
        }
      }
    }
    state.mutex.lock();
    try {
      maybeSchedule();
    } finally {
      state.mutex.unlock();
    }
    state.versions.awaitDeletions();
  }

  /**
   * Schedules nothing from now on and waits for the compactions already running (such as an
   * expired-file drop or a foreign-bucket cleanup a read-only Db's open started). Under the mutex.
   */
  void stop() {
    stopped = true;
    while (running > 0) {
      state.awaitChange();
    }
  }

  /** Waits until no compaction is running or due. */
  void awaitIdle() {
    state.mutex.lock();
    try {
      while (true) {
        state.checkBackground();
        maybeSchedule();
        if (running == 0) {
          break;
        }
        state.awaitChange();
      }
    } finally {
      state.mutex.unlock();
    }
    state.versions.awaitDeletions();
  }

  /** Marks every tree as compacting, waiting for running compactions: levels stay as they are. */
  Set<Integer> holdAllTrees() {
    Set<Integer> held = new HashSet<>();
    state.mutex.lock();
    try {
      running++;
      for (int fam = 0; fam < state.layouts().familySlots(); fam++) {
        while (compacting.contains(fam)) {
          state.awaitChange();
        }
        compacting.add(fam);
        held.add(fam);
      }
    } catch (RuntimeException e) {
      compacting.removeAll(held);
      running--;
      state.changed.signalAll();
      throw e;
    } finally {
      state.mutex.unlock();
    }
    return held;
  }

  void releaseTrees(Set<Integer> held) {
    state.mutex.lock();
    try {
      compacting.removeAll(held);
      running--;
      state.changed.signalAll();
      maybeSchedule();
    } finally {
      state.mutex.unlock();
    }
  }

  /**
   * Rewrites {@code f} for {@code level} with only the rows of buckets {@code keep} accepts; the
   * new files' value logs go into {@code edit}.
   */
  List<FileMeta> rewriteKeeping(
      FileMeta f, int level, ColumnLayout layout, IntPredicate keep, VersionEdit edit) {
    int fam = layout.familyId();
    Compaction c =
        new Compaction(Compaction.Kind.MERGE, fam, level, level, List.of(f), List.of(), false, 0);
    try (OutputWriter w =
        state.outputWriter(
            fam, level, level == 0 ? Long.MAX_VALUE : state.config.targetFileSize())) {
      new CompactionJob(c, layout, state.loader, readAhead(), n -> false, keep).run(w);
      List<FileMeta> out = w.finish();
      for (ValueLogFile log : w.vlogs()) {
        state.upload(log.number(), true);
        edit.addVlog(log);
      }
      bytesIn.addAndGet(f.size());
      bytesOut.addAndGet(w.bytesWritten());
      return out;
    }
  }

  /** Counts an installed rewrite as a compaction. */
  void countRewrite() {
    compactions.incrementAndGet();
  }

  /** Waits for running compactions to stop (they abandon once the shard is closed). Mutex held. */
  void awaitStopped() {
    while (running > 0) {
      state.changed.awaitUninterruptibly();
    }
  }

  void shutdown() {
    executor.shutdownNow();
  }
}
