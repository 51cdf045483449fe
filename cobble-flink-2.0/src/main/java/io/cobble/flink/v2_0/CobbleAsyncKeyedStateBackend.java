package io.cobble.flink.v2_0;

import io.cobble.flink.async.CobbleAsyncKeyedBackend;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.state.v2.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.v2.ListStateDescriptor;
import org.apache.flink.api.common.state.v2.MapStateDescriptor;
import org.apache.flink.api.common.state.v2.ReducingStateDescriptor;
import org.apache.flink.api.common.state.v2.StateDescriptor;
import org.apache.flink.api.common.state.v2.ValueStateDescriptor;
import org.apache.flink.runtime.asyncprocessing.StateExecutor;
import org.apache.flink.runtime.asyncprocessing.StateRequestHandler;
import org.apache.flink.runtime.state.v2.AbstractAggregatingState;
import org.apache.flink.runtime.state.v2.AbstractListState;
import org.apache.flink.runtime.state.v2.AbstractMapState;
import org.apache.flink.runtime.state.v2.AbstractReducingState;
import org.apache.flink.runtime.state.v2.AbstractValueState;
import org.apache.flink.runtime.state.v2.internal.InternalKeyedState;

/** The asynchronous keyed backend on Flink 2.0: Flink's state constructors of 2.0. */
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
        return new AbstractValueState<>(handler, (ValueStateDescriptor<SV>) descriptor);
      case LIST:
        return new AbstractListState<>(handler, (ListStateDescriptor<SV>) descriptor);
      case MAP:
        return new AbstractMapState(handler, (MapStateDescriptor) descriptor);
      case REDUCING:
        return new AbstractReducingState<>(handler, (ReducingStateDescriptor<SV>) descriptor);
      case AGGREGATING:
        return new AbstractAggregatingState(handler, (AggregatingStateDescriptor) descriptor);
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
