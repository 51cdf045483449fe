package io.cobble.flink.v2_1;

import io.cobble.flink.async.CobbleAsyncKeyedBackend;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.state.v2.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.v2.ReducingStateDescriptor;
import org.apache.flink.api.common.state.v2.StateDescriptor;
import org.apache.flink.runtime.asyncprocessing.StateExecutor;
import org.apache.flink.runtime.asyncprocessing.StateRequestHandler;
import org.apache.flink.runtime.state.v2.AbstractAggregatingState;
import org.apache.flink.runtime.state.v2.AbstractListState;
import org.apache.flink.runtime.state.v2.AbstractMapState;
import org.apache.flink.runtime.state.v2.AbstractReducingState;
import org.apache.flink.runtime.state.v2.AbstractValueState;
import org.apache.flink.runtime.state.v2.internal.InternalKeyedState;

/** The asynchronous keyed backend on Flink 2.1 and later: Flink's state constructors of 2.1. */
final class CobbleAsyncKeyedStateBackend<K> extends CobbleAsyncKeyedBackend<K> {

  CobbleAsyncKeyedStateBackend(
      CobbleKeyedStateBackend<K> sync,
      ExecutionConfig executionConfig,
      String operator,
      int readThreads,
      int writeThreads) {
    super(sync, sync.core(), executionConfig, operator, readThreads, writeThreads);
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  protected <SV> InternalKeyedState<K, ?, SV> newState(
      StateRequestHandler handler, StateDescriptor<SV> descriptor) {
    switch (descriptor.getType()) {
      case VALUE:
        return new AbstractValueState<>(handler, descriptor.getSerializer());
      case LIST:
        return new AbstractListState<>(handler, descriptor.getSerializer());
      case MAP:
        return new AbstractMapState(handler, descriptor.getSerializer());
      case REDUCING:
        ReducingStateDescriptor<SV> reducing = (ReducingStateDescriptor<SV>) descriptor;
        return new AbstractReducingState<>(
            handler, reducing.getReduceFunction(), descriptor.getSerializer());
      case AGGREGATING:
        AggregatingStateDescriptor<?, SV, ?> aggregating =
            (AggregatingStateDescriptor<?, SV, ?>) descriptor;
        return new AbstractAggregatingState(
            handler, aggregating.getAggregateFunction(), descriptor.getSerializer());
      default:
        throw new UnsupportedOperationException(
            "The Cobble state backend has no asynchronous " + descriptor.getType() + " state");
    }
  }

  @Override
  public StateExecutor createStateExecutor() {
    return new CobbleStateExecutor(newRunner());
  }
}
