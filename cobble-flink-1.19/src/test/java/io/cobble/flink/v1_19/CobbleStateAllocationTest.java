package io.cobble.flink.v1_19;

import io.cobble.flink.state.StateAllocationContract;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.AbstractStateBackend;

/** The shared per-operation allocation budgets on this line's backend. */
class CobbleStateAllocationTest extends StateAllocationContract {
  @Override
  protected AbstractStateBackend backend(Configuration config) {
    return new CobbleStateBackend().configure(config, getClass().getClassLoader());
  }
}
