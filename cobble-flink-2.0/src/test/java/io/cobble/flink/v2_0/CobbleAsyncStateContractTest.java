package io.cobble.flink.v2_0;

import io.cobble.flink.asyncstate.AsyncStateContract;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.asyncprocessing.AsyncExecutionController;
import org.apache.flink.runtime.asyncprocessing.StateExecutor;
import org.apache.flink.runtime.asyncprocessing.declare.DeclarationManager;
import org.apache.flink.runtime.state.AsyncKeyedStateBackend;
import org.apache.flink.runtime.state.StateBackend;

/** The async state contract on Flink 2.0. */
class CobbleAsyncStateContractTest extends AsyncStateContract {

  @Override
  protected StateBackend stateBackend(Configuration config) {
    return new CobbleStateBackend().configure(config, getClass().getClassLoader());
  }

  @Override
  protected AsyncExecutionController<Integer> controller(
      MailboxExecutor mailbox,
      StateExecutor executor,
      AsyncKeyedStateBackend<Integer> backend,
      int maxParallelism,
      int batchSize,
      AtomicReference<Throwable> failure) {
    return new AsyncExecutionController<>(
        mailbox,
        (message, t) -> failure.compareAndSet(null, t),
        executor,
        new DeclarationManager(),
        maxParallelism,
        batchSize,
        60_000L,
        100_000,
        backend,
        new UnregisteredMetricsGroup());
  }
}
