package io.cobble.flink.v1_19;

import io.cobble.flink.state.StateOpsContract;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.AbstractStateBackend;

/** The shared state-operations tests on this line's backend. */
class CobbleStateOpsTest extends StateOpsContract {
  @Override
  protected AbstractStateBackend backend(Configuration config) {
    return new CobbleStateBackend().configure(config, getClass().getClassLoader());
  }
}
