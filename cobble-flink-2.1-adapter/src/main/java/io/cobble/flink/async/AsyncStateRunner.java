package io.cobble.flink.async;

import io.cobble.flink.state.StateRowReader;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.runtime.asyncprocessing.StateRequestType;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Executes batches of asynchronous state requests of one keyed backend, whatever the Flink line.
 *
 * <p>Batches run one after the other on the apply thread. Within a batch, the point reads of rows
 * that no earlier request of the batch writes (value, reducing and aggregating gets, map gets and
 * contains, of states without TTL) run first, grouped per state and key group into one multi-get
 * each, in parallel on the read pool: they see the state as it was before the batch, which is what
 * the batch's order gives them. Then every other request runs in the batch's order on the apply
 * thread against the synchronous state objects, so a request sees the effect of every earlier one
 * of its key.
 */
public final class AsyncStateRunner<K> {

  private static final Logger LOG = LoggerFactory.getLogger(AsyncStateRunner.class);

  private final KeyedStateBackend<K> backend;
  private final AsyncStates targets;
  private final ExecutorService applyThread;
  private final ExecutorService readPool;
  private final int readThreads;
  private volatile Throwable failure;

  public AsyncStateRunner(
      KeyedStateBackend<K> backend,
      AsyncStates targets,
      String operator,
      int readThreads,
      int writeThreads) {
    this.backend = backend;
    this.targets = targets;
    this.readThreads = readThreads;
    this.applyThread = Executors.newSingleThreadExecutor(daemon("cobble-async-apply-" + operator));
    this.readPool =
        Executors.newFixedThreadPool(readThreads, daemon("cobble-async-read-" + operator));
    if (writeThreads > 1) {
      LOG.info(
          "Cobble applies the asynchronous state writes of one keyed backend in order on one"
              + " thread; {} write threads configured for {}",
          writeThreads,
          operator);
    }
  }

  /** See {@link AsyncStates#stablePayload}. */
  public Object stablePayload(Object asyncState, StateRequestType type, Object payload) {
    return targets.stablePayload(asyncState, type, payload);
  }

  /** Runs a batch; the future completes once every request of it completed. */
  public CompletableFuture<Void> execute(List<PendingRequest> batch) {
    checkNotFailed();
    CompletableFuture<Void> done = new CompletableFuture<>();
    applyThread.execute(
        () -> {
          try {
            runBatch(batch);
            done.complete(null);
          } catch (Throwable t) {
            failure = t;
            done.completeExceptionally(t);
          }
        });
    return done;
  }

  /** Runs one request in order with the batches and waits for it. */
  public void executeSync(PendingRequest request) {
    List<PendingRequest> one = new ArrayList<>(1);
    one.add(request);
    execute(one).join();
  }

  private void checkNotFailed() {
    if (failure != null) {
      throw new IllegalStateException("an earlier batch of state requests failed", failure);
    }
  }

  private void runBatch(List<PendingRequest> batch) throws Exception {
    List<PendingRequest> ordered = new ArrayList<>(batch.size());
    Map<ReadGroup, List<PendingRequest>> reads = new LinkedHashMap<>();
    Set<Object> written = new HashSet<>();
    for (PendingRequest r : batch) {
      // Sync points carry no state.
      StateTarget target = r.state() == null ? null : targets.get(r.state());
      if (target != null && target.isPointRead(r.type()) && !written.contains(r.key())) {
        reads.computeIfAbsent(new ReadGroup(target, r.keyGroup()), g -> new ArrayList<>()).add(r);
      } else {
        ordered.add(r);
        if (!isRead(r.type())) {
          written.add(r.key());
        }
      }
    }
    if (!reads.isEmpty()) {
      readAll(reads);
    }
    for (PendingRequest r : ordered) {
      apply(r);
    }
  }

  private static boolean isRead(StateRequestType type) {
    switch (type) {
      case VALUE_GET:
      case LIST_GET:
      case MAP_GET:
      case MAP_CONTAINS:
      case MAP_ITER:
      case MAP_ITER_KEY:
      case MAP_ITER_VALUE:
      case MAP_IS_EMPTY:
      case REDUCING_GET:
      case AGGREGATING_GET:
      case SYNC_POINT:
        return true;
      default:
        return false;
    }
  }

  /** The groups' multi-gets spread over the read pool; returns once all completed. */
  private void readAll(Map<ReadGroup, List<PendingRequest>> reads) {
    List<Map.Entry<ReadGroup, List<PendingRequest>>> groups = new ArrayList<>(reads.entrySet());
    int tasks = Math.min(readThreads, groups.size());
    AtomicInteger next = new AtomicInteger();
    CompletableFuture<?>[] running = new CompletableFuture<?>[tasks];
    for (int t = 0; t < tasks; t++) {
      running[t] =
          CompletableFuture.runAsync(
              () -> {
                // A thread's own reader per state: readers hold serializers and buffers.
                Map<StateTarget, StateRowReader<Object, Object>> readers = new IdentityHashMap<>();
                for (int i = next.getAndIncrement();
                    i < groups.size();
                    i = next.getAndIncrement()) {
                  Map.Entry<ReadGroup, List<PendingRequest>> g = groups.get(i);
                  StateTarget target = g.getKey().target;
                  StateRowReader<Object, Object> reader =
                      readers.computeIfAbsent(target, StateTarget::newReader);
                  readGroup(target, reader, g.getKey().keyGroup, g.getValue());
                }
              },
              readPool);
    }
    CompletableFuture.allOf(running).join();
  }

  private static void readGroup(
      StateTarget target,
      StateRowReader<Object, Object> reader,
      int keyGroup,
      List<PendingRequest> requests) {
    try {
      List<byte[]> rowKeys = new ArrayList<>(requests.size());
      for (PendingRequest r : requests) {
        Object userKey = reader.isMap() ? r.payload() : null;
        rowKeys.add(reader.rowKey(r.key(), target.namespace(r), userKey));
      }
      byte[][] values = reader.readAll(keyGroup, rowKeys);
      for (int i = 0; i < values.length; i++) {
        PendingRequest r = requests.get(i);
        r.complete(target.pointResult(r.type(), values[i], reader));
      }
    } catch (Throwable t) {
      for (PendingRequest r : requests) {
        r.fail("Cobble could not read asynchronous state", t);
      }
    }
  }

  @SuppressWarnings("unchecked")
  private void apply(PendingRequest r) {
    if (r.type() == StateRequestType.SYNC_POINT) {
      r.complete(null);
      return;
    }
    try {
      StateTarget target = targets.get(r.state());
      if (target == null) {
        throw new IllegalStateException(
            "a request for a state this Cobble backend did not create: " + r.state());
      }
      backend.setCurrentKeyAndKeyGroup((K) r.key(), r.keyGroup());
      r.complete(target.apply(r.type(), target.namespace(r), r.payload()));
    } catch (Throwable t) {
      r.fail("Cobble could not execute a " + r.type() + " state request", t);
    }
  }

  /** Never: batches wait for the apply thread in a queue of their own. */
  public boolean fullyLoaded() {
    return false;
  }

  public void shutdown() {
    applyThread.shutdown();
    readPool.shutdown();
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** The point reads of one state in one key group: one multi-get. */
  private static final class ReadGroup {
    final StateTarget target;
    final int keyGroup;

    ReadGroup(StateTarget target, int keyGroup) {
      this.target = target;
      this.keyGroup = keyGroup;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof ReadGroup
          && ((ReadGroup) o).target == target
          && ((ReadGroup) o).keyGroup == keyGroup;
    }

    @Override
    public int hashCode() {
      return Objects.hash(System.identityHashCode(target), keyGroup);
    }
  }
}
