package io.cobble.flink.state;

import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/**
 * The current key of a keyed backend as the state objects need it. The line's backend implements
 * it: where Flink keeps the key context differs between lines.
 */
public interface KeyAccess<K> {

  K currentKey();

  int currentKeyGroup();

  /** The clock of Flink's state TTL, which compaction compares stored timestamps against. */
  TtlTimeProvider ttlTimeProvider();
}
