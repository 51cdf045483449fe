package io.cobble.flink.v2_1;

import io.cobble.flink.async.AsyncStateRunner;
import io.cobble.flink.async.StateRequestBatch;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.runtime.asyncprocessing.AsyncRequestContainer;
import org.apache.flink.runtime.asyncprocessing.StateExecutor;
import org.apache.flink.runtime.asyncprocessing.StateRequest;

/** Flink 2.1's {@code StateExecutor} (an {@code AsyncExecutor}) over the line-neutral runner. */
final class CobbleStateExecutor implements StateExecutor {

  private final AsyncStateRunner<?> runner;
  private final Batch sync;

  CobbleStateExecutor(AsyncStateRunner<?> runner) {
    this.runner = runner;
    this.sync = new Batch(runner);
  }

  @Override
  public CompletableFuture<Void> executeBatchRequests(
      AsyncRequestContainer<StateRequest<?, ?, ?, ?>> container) {
    return ((Batch) container).execute();
  }

  @Override
  public AsyncRequestContainer<StateRequest<?, ?, ?, ?>> createRequestContainer() {
    return new Batch(runner);
  }

  @Override
  public void executeRequestSync(StateRequest<?, ?, ?, ?> request) {
    sync.executeSync(request);
  }

  @Override
  public boolean fullyLoaded() {
    return runner.fullyLoaded();
  }

  @Override
  public void shutdown() {
    runner.shutdown();
  }

  /** 2.1's container; its futures are {@code InternalAsyncFuture}s. */
  private static final class Batch extends StateRequestBatch
      implements AsyncRequestContainer<StateRequest<?, ?, ?, ?>> {
    Batch(AsyncStateRunner<?> runner) {
      super(runner);
    }

    @Override
    @SuppressWarnings("unchecked")
    protected void complete(StateRequest<?, ?, ?, ?> request, Object result) {
      ((StateRequest<?, ?, ?, Object>) request).getFuture().complete(result);
    }

    @Override
    protected void fail(StateRequest<?, ?, ?, ?> request, String message, Throwable cause) {
      request.getFuture().completeExceptionally(message, cause);
    }
  }
}
