package io.cobble.flink.v2_0;

import io.cobble.flink.async.AsyncStateRunner;
import io.cobble.flink.async.PendingRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.runtime.asyncprocessing.StateExecutor;
import org.apache.flink.runtime.asyncprocessing.StateRequest;
import org.apache.flink.runtime.asyncprocessing.StateRequestContainer;
import org.apache.flink.runtime.asyncprocessing.StateRequestType;

/** Flink 2.0's {@code StateExecutor} over the line-neutral runner. */
final class CobbleStateExecutor implements StateExecutor {

  private final AsyncStateRunner<?> runner;

  CobbleStateExecutor(AsyncStateRunner<?> runner) {
    this.runner = runner;
  }

  @Override
  public CompletableFuture<Void> executeBatchRequests(StateRequestContainer container) {
    return runner.execute(((Batch) container).requests);
  }

  @Override
  public StateRequestContainer createStateRequestContainer() {
    return new Batch(runner);
  }

  @Override
  public void executeRequestSync(StateRequest<?, ?, ?, ?> request) {
    runner.executeSync(new Request(runner, request));
  }

  @Override
  public boolean fullyLoaded() {
    return runner.fullyLoaded();
  }

  @Override
  public void shutdown() {
    runner.shutdown();
  }

  private static final class Batch implements StateRequestContainer {
    final List<PendingRequest> requests = new ArrayList<>();
    private final AsyncStateRunner<?> runner;

    Batch(AsyncStateRunner<?> runner) {
      this.runner = runner;
    }

    @Override
    public void offer(StateRequest<?, ?, ?, ?> request) {
      requests.add(new Request(runner, request));
    }

    @Override
    public boolean isEmpty() {
      return requests.isEmpty();
    }
  }

  private static final class Request implements PendingRequest {
    private final StateRequest<?, ?, ?, Object> request;
    private final Object payload;

    /** On the task thread: the payload is copied before the operator may reuse it. */
    @SuppressWarnings("unchecked")
    Request(AsyncStateRunner<?> runner, StateRequest<?, ?, ?, ?> request) {
      this.request = (StateRequest<?, ?, ?, Object>) request;
      this.payload =
          runner.stablePayload(request.getState(), request.getRequestType(), request.getPayload());
    }

    @Override
    public StateRequestType type() {
      return request.getRequestType();
    }

    @Override
    public Object state() {
      return request.getState();
    }

    @Override
    public Object payload() {
      return payload;
    }

    @Override
    public Object key() {
      return request.getRecordContext().getKey();
    }

    @Override
    public int keyGroup() {
      return request.getRecordContext().getKeyGroup();
    }

    @Override
    public Object namespace() {
      return request.getNamespace();
    }

    @Override
    public void complete(Object result) {
      request.getFuture().complete(result);
    }

    @Override
    public void fail(String message, Throwable cause) {
      request.getFuture().completeExceptionally(message, cause);
    }
  }
}
