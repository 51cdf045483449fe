package io.cobble.flink.v2_1;

import io.cobble.flink.asyncstate.AsyncStateContract;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.asyncprocessing.EpochManager;
import org.apache.flink.runtime.asyncprocessing.RecordContext;
import org.apache.flink.runtime.asyncprocessing.StateExecutionController;
import org.apache.flink.runtime.asyncprocessing.StateExecutor;
import org.apache.flink.runtime.asyncprocessing.StateRequestHandler;
import org.apache.flink.runtime.asyncprocessing.declare.DeclarationManager;
import org.apache.flink.runtime.state.AsyncKeyedStateBackend;
import org.apache.flink.runtime.state.StateBackend;

/** The async state contract on Flink 2.1 and later. */
class CobbleAsyncStateContractTest extends AsyncStateContract {

  @Override
  protected StateBackend stateBackend(Configuration config) {
    return new CobbleStateBackend().configure(config, getClass().getClassLoader());
  }

  @Override
  protected Controller controller(
      MailboxExecutor mailbox,
      StateExecutor executor,
      AsyncKeyedStateBackend<Integer> backend,
      int maxParallelism,
      int batchSize,
      AtomicReference<Throwable> failure) {
    StateExecutionController<Integer> aec =
        new StateExecutionController<>(
            mailbox,
            (message, t) -> failure.compareAndSet(null, t),
            executor,
            new DeclarationManager(),
            EpochManager.ParallelMode.SERIAL_BETWEEN_EPOCH,
            maxParallelism,
            batchSize,
            60_000L,
            100_000,
            backend,
            new UnregisteredMetricsGroup());
    return new Controller() {
      @Override
      public StateRequestHandler handler() {
        return aec;
      }

      @Override
      public RecordContext<Integer> buildContext(Object record, Integer key) {
        return aec.buildContext(record, key);
      }

      @Override
      public void setCurrentContext(RecordContext<Integer> context) {
        aec.setCurrentContext(context);
      }

      @Override
      public void drainInflightRecords(int targetNum) {
        aec.drainInflightRecords(targetNum);
      }

      @Override
      public void runWithKey(Runnable body) {
        aec.syncPointRequestWithCallback(body::run, false);
      }
    };
  }
}
