package io.cobble.flink.v2_0;

import io.cobble.flink.state.CanonicalSavepointPointInTimeContract;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.runtime.state.AbstractStateBackend;

/** The shared point-in-time canonical savepoint tests on this line's backends. */
class CobbleCanonicalSavepointTest extends CanonicalSavepointPointInTimeContract {
  @Override
  protected AbstractStateBackend backend(Configuration config) {
    return new CobbleStateBackend().configure(config, getClass().getClassLoader());
  }

  @Override
  protected AbstractStateBackend rocksDb(Configuration config) {
    return new EmbeddedRocksDBStateBackend().configure(config, getClass().getClassLoader());
  }
}
