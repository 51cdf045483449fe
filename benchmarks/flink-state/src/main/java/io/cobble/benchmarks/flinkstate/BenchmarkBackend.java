package io.cobble.benchmarks.flinkstate;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendFactory;
import org.apache.flink.runtime.state.StateBackendLoader;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.state.benchmark.StateBackendBenchmarkUtils;

/**
 * One keyed backend under benchmark and how to dispose of it. HEAP and ROCKSDB come from Flink's
 * {@link StateBackendBenchmarkUtils}, exactly as apache/flink-benchmarks builds them; COBBLE goes
 * through {@value #COBBLE_BACKEND_FACTORY}, the factory a cluster configuration names (it builds
 * the backend class of the running Flink line), loaded by reflection so that this harness compiles
 * without the runtime jar's classes. Both use key-group range (0,1) of 2 key groups and {@link
 * LongSerializer} keys.
 */
final class BenchmarkBackend implements AutoCloseable {
  static final String COBBLE_BACKEND_FACTORY = "io.cobble.flink.state.CobbleStateBackendFactory";

  /** System properties with this prefix are passed to the Cobble backend, e.g. memory sizing. */
  private static final String COBBLE_PREFIX = "state.backend.cobble.";

  private final KeyedStateBackend<Long> backend;
  private final boolean fromFlinkUtils;
  private final MockEnvironment environment;
  private final Path directory;
  private final EngineGauges gauges;

  private BenchmarkBackend(
      KeyedStateBackend<Long> backend,
      boolean fromFlinkUtils,
      MockEnvironment environment,
      Path directory,
      EngineGauges gauges) {
    this.backend = backend;
    this.fromFlinkUtils = fromFlinkUtils;
    this.environment = environment;
    this.directory = directory;
    this.gauges = gauges;
  }

  /** {@code type}: HEAP, ROCKSDB (or another StateBackendBenchmarkUtils type) or COBBLE. */
  static BenchmarkBackend create(String type, File parentDir) throws Exception {
    if (type.equals("COBBLE")) {
      return createCobble(parentDir);
    }
    StateBackendBenchmarkUtils.StateBackendType flinkType;
    try {
      flinkType = StateBackendBenchmarkUtils.StateBackendType.valueOf(type);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "backendType "
              + type
              + " is unknown: use COBBLE or one of "
              + java.util.Arrays.toString(StateBackendBenchmarkUtils.StateBackendType.values()),
          e);
    }
    return new BenchmarkBackend(
        StateBackendBenchmarkUtils.createKeyedStateBackend(flinkType, parentDir),
        true,
        null,
        null,
        null);
  }

  /**
   * Compacts an LSM backend's state where upstream's list benchmark compacts RocksDB between
   * iterations, so that neither LSM carries one iteration's compaction debt (or its clears'
   * tombstones) into the next one's measurement: RocksDB into one file through {@code
   * StateBackendBenchmarkUtils.compactState} (it takes a {@code RocksDBKeyedStateBackend} up to
   * 1.20 and any keyed backend from 2.0 on, and RocksDB's package moved in 2.0, hence reflection),
   * Cobble through its shard's {@code Db.compactAll} (flush, then every tree into a single level).
   *
   * @return whether the backend is an LSM (RocksDB or Cobble) and was compacted
   */
  static boolean compactIfLsm(KeyedStateBackend<Long> backend, StateDescriptor<?, ?> state)
      throws Exception {
    String type = backend.getClass().getSimpleName();
    if (type.equals("CobbleKeyedStateBackend")) {
      Object db = member(member(backend, "core"), "db");
      member(db, "compactAll");
      return true;
    }
    if (!type.equals("RocksDBKeyedStateBackend")) {
      return false;
    }
    for (Method m : StateBackendBenchmarkUtils.class.getMethods()) {
      if (m.getName().equals("compactState") && m.getParameterCount() == 2) {
        m.invoke(null, backend, state);
        return true;
      }
    }
    throw new IllegalStateException("StateBackendBenchmarkUtils has no compactState");
  }

  /** The engine counters {@link #engineCounters} reads, in its order. */
  static final String[] ENGINE_COUNTERS = {
    "flushBytes", "compactionBytesIn", "compactionBytesOut", "stallWaits", "stallMillis"
  };

  /**
   * The Cobble shard's cumulative {@link #ENGINE_COUNTERS} (its {@code DbMetrics}), or null for
   * another backend: with the CPU per thread they give the CPU per byte flushed or compacted.
   */
  static long[] engineCounters(KeyedStateBackend<Long> backend) throws Exception {
    if (!backend.getClass().getSimpleName().equals("CobbleKeyedStateBackend")) {
      return null;
    }
    Object metrics = member(member(member(backend, "core"), "db"), "metrics");
    long[] values = new long[ENGINE_COUNTERS.length];
    for (int i = 0; i < values.length; i++) {
      values[i] = (Long) member(metrics, ENGINE_COUNTERS[i]);
    }
    return values;
  }

  /**
   * The value of {@code target}'s no-argument method {@code name}, or of its field {@code name}
   * (the lines differ: the 1.19 backend keeps its core in a field, the 2.x ones expose a method).
   */
  private static Object member(Object target, String name) throws Exception {
    for (Class<?> c = target.getClass(); c != null; c = c.getSuperclass()) {
      for (Method m : c.getDeclaredMethods()) {
        if (m.getName().equals(name) && m.getParameterCount() == 0) {
          m.setAccessible(true);
          return m.invoke(target);
        }
      }
      for (Field f : c.getDeclaredFields()) {
        if (f.getName().equals(name)) {
          f.setAccessible(true);
          return f.get(target);
        }
      }
    }
    throw new IllegalStateException(
        target.getClass().getName() + " has no method or field " + name + ": cannot compact it");
  }

  /** RocksDB with incremental checkpoints, loaded the way a cluster configuration selects it. */
  static StateBackend rocksDbIncremental() throws Exception {
    Configuration config = new Configuration();
    config.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
    config.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
    return StateBackendLoader.loadStateBackendFromConfig(
        config, BenchmarkBackend.class.getClassLoader(), null);
  }

  KeyedStateBackend<Long> backend() {
    return backend;
  }

  /**
   * The Cobble engine's gauges, e.g. files per level; null for the backends Flink's utils build.
   */
  String engineState() {
    return gauges == null ? null : gauges.describe();
  }

  @Override
  public void close() throws Exception {
    if (fromFlinkUtils) {
      StateBackendBenchmarkUtils.cleanUp(backend);
      return;
    }
    try {
      if (backend instanceof CheckpointableKeyedStateBackend) {
        ((CheckpointableKeyedStateBackend<?>) backend).close();
      }
      backend.dispose();
      environment.close();
    } finally {
      deleteRecursively(directory);
    }
  }

  private static BenchmarkBackend createCobble(File parentDir) throws Exception {
    Path dir = Files.createTempDirectory(parentDir.toPath(), "cobble-state-");
    StateBackend stateBackend = cobbleStateBackend(dir);
    MockEnvironment environment = new MockEnvironmentBuilder().build();
    EngineGauges gauges = new EngineGauges();
    KeyedStateBackend<Long> keyed =
        stateBackend.createKeyedStateBackend(
            new KeyedStateBackendParametersImpl<>(
                environment,
                new JobID(),
                "cobble-state-benchmark",
                LongSerializer.INSTANCE,
                2,
                new KeyGroupRange(0, 1),
                environment.getTaskKvStateRegistry(),
                TtlTimeProvider.DEFAULT,
                gauges,
                Collections.emptyList(),
                new CloseableRegistry()));
    return new BenchmarkBackend(keyed, false, environment, dir, gauges);
  }

  /**
   * Cobble's {@link StateBackend}, created by reflection and configured as a cluster would: {@code
   * localDir} as its local directory plus any {@code -Dstate.backend.cobble.*}.
   */
  static StateBackend cobbleStateBackend(Path localDir) throws Exception {
    Class<?> factoryClass;
    try {
      factoryClass = Class.forName(COBBLE_BACKEND_FACTORY);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(
          "backendType COBBLE needs "
              + COBBLE_BACKEND_FACTORY
              + ", which the Cobble runtime jar on this classpath does not contain; build the"
              + " line's runtime jar (dist-matrix) first",
          e);
    }
    StateBackendFactory<?> factory =
        (StateBackendFactory<?>) factoryClass.getDeclaredConstructor().newInstance();
    return factory.createFromConfig(
        cobbleConfig(localDir), BenchmarkBackend.class.getClassLoader());
  }

  /**
   * The benchmark's own directory, and a fixed 128 MB budget (the RocksDB backend of the utils is
   * not bound to managed memory either); {@code -Dstate.backend.cobble.*} overrides any key.
   */
  private static Configuration cobbleConfig(Path dir) {
    Configuration config = new Configuration();
    config.set(text(COBBLE_PREFIX + "localdir"), dir.toAbsolutePath().toString());
    config.set(text(COBBLE_PREFIX + "memory.managed"), "false");
    for (Map.Entry<Object, Object> e : System.getProperties().entrySet()) {
      String key = String.valueOf(e.getKey());
      if (key.startsWith(COBBLE_PREFIX)) {
        config.set(text(key), String.valueOf(e.getValue()));
      }
    }
    return config;
  }

  private static ConfigOption<String> text(String key) {
    return ConfigOptions.key(key).stringType().noDefaultValue();
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    }
  }
}
