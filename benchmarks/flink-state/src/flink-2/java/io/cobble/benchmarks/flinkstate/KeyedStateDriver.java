package io.cobble.benchmarks.flinkstate;

import java.io.File;

/**
 * The four shapes of {@link AsyncStateBenchmark} on one backend. Requests may complete later (async
 * backends); {@link #drain()} returns once every request issued so far has completed and its result
 * has been consumed.
 */
interface KeyedStateDriver extends AutoCloseable {

  /** The backends the benchmark compares. */
  enum Type {
    /** Flink's ForSt backend through its async (State V2) API. */
    FORST,
    /** Cobble's {@code AsyncKeyedStateBackend}, served by its read and write pools. */
    COBBLE_ASYNC,
    /** Cobble's sync keyed backend: each operation completes in the call. */
    COBBLE_SYNC
  }

  void valueUpdate(Long key, Long value);

  void valueGet(Long key);

  void mapUpdate(Long key, Long userKey, Double value);

  void mapGet(Long key, Long userKey);

  void drain();

  /** The last value a get returned, for the check and to keep reads from being elided. */
  Object lastRead();

  static KeyedStateDriver create(Type type, File parentDir) throws Exception {
    switch (type) {
      case FORST:
        return AsyncStateDriver.forst(parentDir);
      case COBBLE_ASYNC:
        return AsyncStateDriver.cobble(parentDir);
      case COBBLE_SYNC:
        return new SyncStateDriver(BenchmarkBackend.create("COBBLE", parentDir));
      default:
        throw new IllegalArgumentException("backendType " + type + " is not supported");
    }
  }
}
