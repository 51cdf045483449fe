package io.cobble.benchmarks.flinkstate;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.state.v2.MapState;
import org.apache.flink.api.common.state.v2.MapStateDescriptor;
import org.apache.flink.api.common.state.v2.State;
import org.apache.flink.api.common.state.v2.StateDescriptor;
import org.apache.flink.api.common.state.v2.ValueState;
import org.apache.flink.api.common.state.v2.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.DoubleSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.asyncprocessing.AsyncExecutionController;
import org.apache.flink.runtime.asyncprocessing.RecordContext;
import org.apache.flink.runtime.asyncprocessing.StateExecutor;
import org.apache.flink.runtime.asyncprocessing.declare.DeclarationManager;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AsyncKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.state.forst.ForStOptions;
import org.apache.flink.state.forst.ForStStateBackend;
import org.apache.flink.streaming.runtime.tasks.StreamTaskActionExecutor;
import org.apache.flink.streaming.runtime.tasks.mailbox.MailboxExecutorImpl;
import org.apache.flink.streaming.runtime.tasks.mailbox.TaskMailboxImpl;
import org.apache.flink.util.function.ThrowingConsumer;

/**
 * The shapes through an {@link AsyncKeyedStateBackend} driven by Flink's own {@link
 * AsyncExecutionController}, as an async-state operator drives it: each operation is one record
 * (context built for its key, body run once the record holds the key, one state request issued,
 * context released); the controller buffers the requests and hands them to the backend's {@link
 * StateExecutor} in batches; results come back through the mailbox of the calling thread, which
 * must therefore be the thread that created the driver.
 */
final class AsyncStateDriver implements KeyedStateDriver {
  /** Flink's defaults: execution.async-state.buffer-size, -timeout, in-flight-records-limit. */
  static final int BUFFER_SIZE = 1000;

  private static final long BUFFER_TIMEOUT_MS = 1000;
  private static final int IN_FLIGHT_LIMIT = 6000;

  /** The same key-group range of 2 key groups as the sync benchmarks. */
  private static final int MAX_PARALLELISM = 2;

  private static final Object RECORD = new Object();

  private final Path directory;
  private final MockEnvironment environment;
  private final AsyncKeyedStateBackend<Long> backend;
  private final StateExecutor executor;
  private final AsyncExecutionController<Long> aec;
  private final ValueState<Long> value;
  private final MapState<Long, Double> map;
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final ThrowingConsumer<Object, Exception> readConsumer = v -> lastRead = v;
  private Object lastRead;

  /** ForSt with everything on the local disk and a fixed 128 MB, as Cobble is configured. */
  static AsyncStateDriver forst(File parentDir) throws Exception {
    Path dir = Files.createTempDirectory(parentDir.toPath(), "forst-async-");
    Configuration config = new Configuration();
    config.set(ForStOptions.LOCAL_DIRECTORIES, dir.resolve("local").toString());
    config.set(ForStOptions.PRIMARY_DIRECTORY, ForStStateBackend.LOCAL_DIR_AS_PRIMARY_SHORTCUT);
    config.set(ForStOptions.USE_MANAGED_MEMORY, false);
    config.set(ForStOptions.FIX_PER_SLOT_MEMORY_SIZE, MemorySize.ofMebiBytes(128));
    StateBackend backend =
        new ForStStateBackend().configure(config, AsyncStateDriver.class.getClassLoader());
    return open(backend, dir);
  }

  /** Cobble as {@code BenchmarkBackend} configures it for the sync benchmarks. */
  static AsyncStateDriver cobble(File parentDir) throws Exception {
    Path dir = Files.createTempDirectory(parentDir.toPath(), "cobble-async-");
    return open(BenchmarkBackend.cobbleStateBackend(dir), dir);
  }

  /** The driver, or the directory removed again when the backend cannot be built. */
  private static AsyncStateDriver open(StateBackend backend, Path dir) throws Exception {
    try {
      return new AsyncStateDriver(backend, dir);
    } catch (Exception | Error e) {
      deleteRecursively(dir);
      throw e;
    }
  }

  private AsyncStateDriver(StateBackend stateBackend, Path dir) throws Exception {
    if (!stateBackend.supportsAsyncKeyedStateBackend()) {
      throw new IllegalStateException(
          stateBackend.getClass().getName() + " does not support the async keyed state backend");
    }
    this.directory = dir;
    this.environment = new MockEnvironmentBuilder().build();
    JobID jobId = new JobID();
    // ForSt resolves its directories against the task's checkpoint storage; no checkpoint is taken.
    environment.setCheckpointStorageAccess(
        new FileSystemCheckpointStorage(dir.resolve("checkpoints").toUri())
            .createCheckpointStorage(jobId));
    this.backend =
        stateBackend.createAsyncKeyedStateBackend(
            new KeyedStateBackendParametersImpl<>(
                environment,
                jobId,
                "async-state-benchmark",
                LongSerializer.INSTANCE,
                MAX_PARALLELISM,
                new KeyGroupRange(0, MAX_PARALLELISM - 1),
                environment.getTaskKvStateRegistry(),
                TtlTimeProvider.DEFAULT,
                new UnregisteredMetricsGroup(),
                (name, v) -> {},
                Collections.emptyList(),
                new CloseableRegistry(),
                1.0));
    this.executor = backend.createStateExecutor();
    MailboxExecutor mailbox =
        new MailboxExecutorImpl(
            new TaskMailboxImpl(Thread.currentThread()), 0, StreamTaskActionExecutor.IMMEDIATE);
    this.aec =
        new AsyncExecutionController<>(
            mailbox,
            (message, t) -> failure.compareAndSet(null, new IllegalStateException(message, t)),
            executor,
            new DeclarationManager(),
            MAX_PARALLELISM,
            BUFFER_SIZE,
            BUFFER_TIMEOUT_MS,
            IN_FLIGHT_LIMIT,
            null,
            new UnregisteredMetricsGroup());
    backend.setup(aec);
    this.value = create(new ValueStateDescriptor<>("kvState", LongSerializer.INSTANCE));
    this.map =
        create(
            new MapStateDescriptor<>(
                "mapState", LongSerializer.INSTANCE, DoubleSerializer.INSTANCE));
  }

  private <S extends State> S create(StateDescriptor<?> descriptor) throws Exception {
    return backend.getOrCreateKeyedState(
        VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, descriptor);
  }

  @Override
  public void valueUpdate(Long key, Long v) {
    record(key, () -> value.asyncUpdate(v));
  }

  @Override
  public void valueGet(Long key) {
    record(key, () -> value.asyncValue().thenAccept(readConsumer));
  }

  @Override
  public void mapUpdate(Long key, Long userKey, Double v) {
    record(key, () -> map.asyncPut(userKey, v));
  }

  @Override
  public void mapGet(Long key, Long userKey) {
    record(key, () -> map.asyncGet(userKey).thenAccept(readConsumer));
  }

  /** One record of {@code key}, as {@code AbstractAsyncStateStreamOperator} processes it. */
  private void record(Long key, Runnable body) {
    RecordContext<Long> context = aec.buildContext(RECORD, key);
    context.retain();
    aec.setCurrentContext(context);
    aec.syncPointRequestWithCallback(body::run, false);
    context.release();
  }

  @Override
  public void drain() {
    aec.drainInflightRecords(0);
    Throwable t = failure.get();
    if (t != null) {
      throw new IllegalStateException("a state request failed", t);
    }
  }

  @Override
  public Object lastRead() {
    return lastRead;
  }

  @Override
  public void close() throws Exception {
    try {
      aec.close();
      executor.shutdown();
      backend.dispose();
      environment.close();
    } finally {
      deleteRecursively(directory);
    }
  }

  private static void deleteRecursively(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    }
  }
}
