package io.cobble.flink.table.source;

import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.AsyncLookupFunction;
import org.apache.flink.table.functions.FunctionContext;

/**
 * Exact primary-key lookups on a sink table ({@link LookupReads}) that never make the task thread
 * wait on storage. A probe whose answer is in memory (the bloom filters rule the key out, or its
 * blocks are pinned or cached) is answered on the calling thread, which costs less than any
 * hand-off; only a probe that needs a storage read (a block-cache miss, a shard opening, a poll for
 * a new snapshot) goes to a pool of {@code lookup.async.max-in-flight} threads, so that many probes
 * wait on storage at once. At most that many reads are in flight per subtask; further probes queue
 * in the pool, and Flink's async operator bounds how many probes wait in all ({@code
 * table.exec.async-lookup.buffer-capacity}) and restores their order when the join is ordered.
 */
public final class CobbleAsyncLookupFunction extends AsyncLookupFunction {

  private static final long serialVersionUID = 1L;

  private final LookupReads reads;
  private final int maxInFlight;
  private transient ExecutorService pool;
  // The calling thread's own key buffer: Flink calls asyncLookup from the task thread only.
  private transient ProbeKeyBuffer callerKeys;
  private transient Counter answeredInline;
  private transient Counter handedOff;

  CobbleAsyncLookupFunction(LookupReads reads, int maxInFlight) {
    this.reads = reads;
    this.maxInFlight = maxInFlight;
  }

  @Override
  public void open(FunctionContext context) throws Exception {
    reads.open(context.getMetricGroup(), true);
    MetricGroup group = context.getMetricGroup().addGroup("cobble");
    answeredInline = group.counter("lookupsAnsweredInline", new SimpleCounter());
    handedOff = group.counter("lookupsHandedOff", new SimpleCounter());
    callerKeys = new ProbeKeyBuffer();
    pool = Executors.newFixedThreadPool(maxInFlight, new LookupThreads());
  }

  @Override
  public CompletableFuture<Collection<RowData>> asyncLookup(RowData keyRow) {
    Collection<RowData> inMemory;
    try {
      inMemory = reads.lookupInMemory(keyRow, callerKeys);
    } catch (RuntimeException e) {
      return failed(e);
    }
    if (inMemory != null) {
      answeredInline.inc();
      return CompletableFuture.completedFuture(inMemory);
    }
    handedOff.inc();
    return CompletableFuture.supplyAsync(
        () -> reads.lookup(keyRow, ((LookupThread) Thread.currentThread()).keyBuffer), pool);
  }

  private static CompletableFuture<Collection<RowData>> failed(Throwable e) {
    CompletableFuture<Collection<RowData>> future = new CompletableFuture<>();
    future.completeExceptionally(e);
    return future;
  }

  /** Probes answered on the calling thread so far. */
  long answeredInline() {
    return answeredInline.getCount();
  }

  /** Probes handed to the pool so far. */
  long handedOff() {
    return handedOff.getCount();
  }

  @Override
  public void close() throws Exception {
    try {
      if (pool != null) {
        pool.shutdownNow();
        // Reads in flight finish quickly; the shared reader must outlive them.
        pool.awaitTermination(30, TimeUnit.SECONDS);
      }
    } finally {
      reads.close();
    }
  }

  /** Daemon threads named after the function, so a stuck read is easy to spot in a thread dump. */
  private static final class LookupThreads implements ThreadFactory {
    private static final AtomicInteger IDS = new AtomicInteger();

    @Override
    public Thread newThread(Runnable task) {
      Thread thread = new LookupThread(task, "cobble-async-lookup-" + IDS.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    }
  }

  /** A pool thread, carrying its own key buffer (a field read, not a thread-local lookup). */
  private static final class LookupThread extends Thread {
    final ProbeKeyBuffer keyBuffer = new ProbeKeyBuffer();

    LookupThread(Runnable task, String name) {
      super(task, name);
    }
  }
}
