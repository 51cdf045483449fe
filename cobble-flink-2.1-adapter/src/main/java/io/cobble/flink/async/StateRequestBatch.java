package io.cobble.flink.async;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.runtime.asyncprocessing.StateRequest;
import org.apache.flink.runtime.asyncprocessing.StateRequestType;

/**
 * Flink's state requests of one batch, turned into {@link PendingRequest}s as they join it (on the
 * task thread, copying the payload before the operator may reuse it) and run by the {@link
 * AsyncStateRunner}. Every 2.x minor's state executor uses it; what differs is only the container
 * interface the minor's subclass implements and the type of a request's future (so completing it is
 * left to the subclass).
 *
 * <p>Linked on every 2.x minor: it only calls members of {@code StateRequest} whose descriptors are
 * the same on 2.0 and 2.1+ (not {@code getFuture}).
 */
public abstract class StateRequestBatch {
  private final AsyncStateRunner<?> runner;
  private final List<PendingRequest> requests = new ArrayList<>();

  protected StateRequestBatch(AsyncStateRunner<?> runner) {
    this.runner = runner;
  }

  public void offer(StateRequest<?, ?, ?, ?> request) {
    requests.add(new Request(request));
  }

  public boolean isEmpty() {
    return requests.isEmpty();
  }

  /** Runs the batch's requests; the future completes when all of them have. */
  public CompletableFuture<Void> execute() {
    return runner.execute(requests);
  }

  /** Runs one request outside any batch, on the calling thread's turn. */
  public void executeSync(StateRequest<?, ?, ?, ?> request) {
    runner.executeSync(new Request(request));
  }

  /** Completes the request's future with {@code result}. */
  protected abstract void complete(StateRequest<?, ?, ?, ?> request, Object result);

  /** Completes the request's future exceptionally. */
  protected abstract void fail(StateRequest<?, ?, ?, ?> request, String message, Throwable cause);

  private final class Request implements PendingRequest {
    private final StateRequest<?, ?, ?, ?> request;
    private final Object payload;

    Request(StateRequest<?, ?, ?, ?> request) {
      this.request = request;
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
      StateRequestBatch.this.complete(request, result);
    }

    @Override
    public void fail(String message, Throwable cause) {
      StateRequestBatch.this.fail(request, message, cause);
    }
  }
}
