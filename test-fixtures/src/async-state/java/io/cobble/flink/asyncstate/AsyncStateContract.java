package io.cobble.flink.asyncstate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.state.v2.AggregatingState;
import org.apache.flink.api.common.state.v2.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.v2.ListState;
import org.apache.flink.api.common.state.v2.ListStateDescriptor;
import org.apache.flink.api.common.state.v2.MapState;
import org.apache.flink.api.common.state.v2.MapStateDescriptor;
import org.apache.flink.api.common.state.v2.ReducingState;
import org.apache.flink.api.common.state.v2.ReducingStateDescriptor;
import org.apache.flink.api.common.state.v2.StateFuture;
import org.apache.flink.api.common.state.v2.StateIterator;
import org.apache.flink.api.common.state.v2.ValueState;
import org.apache.flink.api.common.state.v2.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.asyncprocessing.AsyncExecutionController;
import org.apache.flink.runtime.asyncprocessing.RecordContext;
import org.apache.flink.runtime.asyncprocessing.StateExecutor;
import org.apache.flink.runtime.asyncprocessing.StateRequestHandler;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AsyncKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.streaming.runtime.tasks.StreamTaskActionExecutor;
import org.apache.flink.streaming.runtime.tasks.mailbox.MailboxExecutorImpl;
import org.apache.flink.streaming.runtime.tasks.mailbox.TaskMailboxImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cobble's asynchronous keyed backend driven by Flink's own async execution controller, with many
 * requests per batch: randomized operations on value, list, map, reducing and aggregating state
 * checked against a model, including reads issued before and after a write of the same key in one
 * record (so in one batch), then a checkpoint restored into two backends that split the key groups
 * (a changed parallelism), and backends given fewer key groups than their range ends at (as Flink's
 * State V2 test base builds them) restored across three targets. Replay a run with {@code
 * -Dcobble.test.seed=<seed>}.
 */
public abstract class AsyncStateContract {

  private static final int MAX_PARALLELISM = 128;
  private static final int KEYS = 200;
  private static final KeyGroupRange ALL = new KeyGroupRange(0, MAX_PARALLELISM - 1);
  private static final KeyGroupRange FIRST_HALF = new KeyGroupRange(0, MAX_PARALLELISM / 2 - 1);
  private static final KeyGroupRange SECOND_HALF =
      new KeyGroupRange(MAX_PARALLELISM / 2, MAX_PARALLELISM - 1);
  private static final int RECORDS = Integer.getInteger("cobble.test.records", 3000);

  @TempDir Path tmp;

  /**
   * The first failure Flink's async framework reported; a failed request leaves its record hanging.
   */
  private final AtomicReference<Throwable> failure = new AtomicReference<>();

  /** The line's Cobble state backend, configured with {@code config}. */
  protected abstract StateBackend stateBackend(Configuration config);

  /**
   * Flink's controller of this line, reporting framework failures to {@code failure}. Raw: its type
   * parameters changed in 2.1 (2.1+ returns a {@code StateExecutionController}); the contract uses
   * only members both share.
   */
  @SuppressWarnings("rawtypes")
  protected abstract AsyncExecutionController controller(
      MailboxExecutor mailbox,
      StateExecutor executor,
      AsyncKeyedStateBackend<Integer> backend,
      int maxParallelism,
      int batchSize,
      AtomicReference<Throwable> failure);

  /** What the contract uses of Flink's async execution controller. */
  @SuppressWarnings({"rawtypes", "unchecked"})
  private static final class Controller {
    private final AsyncExecutionController aec;

    Controller(AsyncExecutionController aec) {
      this.aec = aec;
    }

    /** 2.0's controller is the handler itself, 2.1's {@code StateExecutionController} too. */
    StateRequestHandler handler() {
      return (StateRequestHandler) aec;
    }

    RecordContext<Integer> buildContext(Object record, Integer key) {
      return aec.buildContext(record, key);
    }

    void setCurrentContext(RecordContext<Integer> context) {
      aec.setCurrentContext(context);
    }

    void drainInflightRecords(int targetNum) {
      aec.drainInflightRecords(targetNum);
    }

    /** Runs {@code body} once the current record holds its key, as Flink's operators do. */
    void runWithKey(Runnable body) {
      aec.syncPointRequestWithCallback(body::run, false);
    }
  }

  /** The model of all states of one key. */
  private static final class KeyModel {
    Integer value;
    final List<Integer> list = new ArrayList<>();
    final Map<Integer, String> map = new TreeMap<>();
    Long reduced;
    Long aggregated;
  }

  /** The five states of one backend and the controller that serves them. */
  private final class Run {
    final MockEnvironment env = new MockEnvironmentBuilder().build();
    final AsyncKeyedStateBackend<Integer> backend;
    final StateExecutor executor;
    final Controller aec;
    final ValueState<Integer> value;
    final ListState<Integer> list;
    final MapState<Integer, String> map;
    final ReducingState<Long> reducing;
    final AggregatingState<Long, String> aggregating;

    Run(
        String operator,
        MailboxExecutor mailbox,
        KeyGroupRange range,
        Collection<KeyedStateHandle> restore)
        throws Exception {
      this(operator, mailbox, range, restore, MAX_PARALLELISM, MAX_PARALLELISM);
    }

    /**
     * A backend given {@code numberOfKeyGroups} whose records carry the key groups of {@code
     * maxParallelism}.
     */
    Run(
        String operator,
        MailboxExecutor mailbox,
        KeyGroupRange range,
        Collection<KeyedStateHandle> restore,
        int numberOfKeyGroups,
        int maxParallelism)
        throws Exception {
      Configuration config = CobbleTestBaseSetup.backendConfig(tmp);
      config.setString("state.backend.cobble.async.read-threads", "3");
      backend =
          stateBackend(config)
              .createAsyncKeyedStateBackend(
                  new KeyedStateBackendParametersImpl<>(
                      env,
                      new JobID(),
                      operator,
                      IntSerializer.INSTANCE,
                      numberOfKeyGroups,
                      range,
                      env.getTaskKvStateRegistry(),
                      TtlTimeProvider.DEFAULT,
                      new UnregisteredMetricsGroup(),
                      (name, v) -> {},
                      restore,
                      new CloseableRegistry(),
                      1.0));
      executor = backend.createStateExecutor();
      aec = new Controller(controller(mailbox, executor, backend, maxParallelism, 64, failure));
      backend.setup(aec.handler());
      value = create(new ValueStateDescriptor<>("value", IntSerializer.INSTANCE));
      list = create(new ListStateDescriptor<>("list", IntSerializer.INSTANCE));
      map =
          create(
              new MapStateDescriptor<>("map", IntSerializer.INSTANCE, StringSerializer.INSTANCE));
      reducing =
          create(new ReducingStateDescriptor<>("reducing", Long::sum, LongSerializer.INSTANCE));
      aggregating =
          create(
              new AggregatingStateDescriptor<>("aggregating", new Sum(), LongSerializer.INSTANCE));
    }

    private <S extends org.apache.flink.api.common.state.v2.State> S create(
        org.apache.flink.api.common.state.v2.StateDescriptor<?> descriptor) throws Exception {
      return backend.getOrCreateKeyedState(
          VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, descriptor);
    }

    /** Runs {@code body} in the context of a new record of {@code key}. */
    void record(Object record, int key, Runnable body) {
      RecordContext<Integer> context = aec.buildContext(record, key);
      context.retain();
      aec.setCurrentContext(context);
      aec.runWithKey(body);
      context.release();
    }

    void drain() {
      aec.drainInflightRecords(0);
      assertThat(failure.get()).as("async framework failure").isNull();
    }

    void close() throws Exception {
      executor.shutdown();
      backend.dispose();
      env.close();
    }
  }

  /** A sum as an aggregate function: accumulator Long, result its decimal text. */
  private static final class Sum implements AggregateFunction<Long, Long, String> {
    @Override
    public Long createAccumulator() {
      return 0L;
    }

    @Override
    public Long add(Long value, Long accumulator) {
      return value + accumulator;
    }

    @Override
    public String getResult(Long accumulator) {
      return Long.toString(accumulator);
    }

    @Override
    public Long merge(Long a, Long b) {
      return a + b;
    }
  }

  @Test
  void randomizedOperationsMatchModelAndSurviveCheckpoint() {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    System.out.println(
        "AsyncStateContract seed: " + seed + " (replay: -Dcobble.test.seed=" + seed + ")");
    assertTimeoutPreemptively(
        Duration.ofSeconds(60),
        () -> scenario(seed),
        () ->
            "seed "
                + seed
                + ", async framework failure: "
                + stackTrace(failure.get())
                + asyncThreads());
  }

  private void scenario(long seed) throws Exception {
    TaskMailboxImpl mailbox = new TaskMailboxImpl(Thread.currentThread());
    MailboxExecutor mailboxExecutor =
        new MailboxExecutorImpl(mailbox, 0, StreamTaskActionExecutor.IMMEDIATE);
    Random rnd = new Random(seed);
    Map<Integer, KeyModel> model = new HashMap<>();
    List<String> mismatches = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger expected = new AtomicInteger();
    AtomicInteger checked = new AtomicInteger();
    String operator = "async-contract-" + seed;
    Run run = new Run(operator, mailboxExecutor, ALL, Collections.emptyList());
    KeyedStateHandle handle;
    try {
      for (int i = 0; i < RECORDS; i++) {
        int key = rnd.nextInt(KEYS);
        KeyModel m = model.computeIfAbsent(key, k -> new KeyModel());
        int op = rnd.nextInt(8);
        int x = rnd.nextInt(1000);
        String where = "record " + i + " key " + key + " op " + op;
        Checker check = new Checker(where, mismatches, expected, checked);
        run.record(
            i,
            key,
            () -> {
              switch (op) {
                case 0:
                  check.that(run.value.asyncValue(), m.value);
                  run.value.asyncUpdate(x);
                  m.value = x;
                  check.that(run.value.asyncValue(), x);
                  break;
                case 1:
                  run.value.asyncClear();
                  m.value = null;
                  check.that(run.value.asyncValue(), null);
                  break;
                case 2:
                  run.list.asyncAdd(x);
                  m.list.add(x);
                  check.that(collect(run.list.asyncGet()), new ArrayList<>(m.list));
                  break;
                case 3:
                  int uk = x % 16;
                  check.that(run.map.asyncGet(uk), m.map.get(uk));
                  run.map.asyncPut(uk, "v" + x);
                  m.map.put(uk, "v" + x);
                  check.that(run.map.asyncGet(uk), "v" + x);
                  int other = (x + 7) % 16;
                  check.that(run.map.asyncContains(other), m.map.containsKey(other));
                  break;
                case 4:
                  int removed = x % 16;
                  run.map.asyncRemove(removed);
                  m.map.remove(removed);
                  check.that(run.map.asyncContains(removed), false);
                  check.that(run.map.asyncIsEmpty(), m.map.isEmpty());
                  break;
                case 5:
                  check.that(entries(run.map), new TreeMap<>(m.map));
                  break;
                case 6:
                  m.reduced = (m.reduced == null ? 0L : m.reduced) + x;
                  check.that(
                      run.reducing.asyncAdd((long) x).thenCompose(v -> run.reducing.asyncGet()),
                      m.reduced);
                  break;
                default:
                  m.aggregated = (m.aggregated == null ? 0L : m.aggregated) + x;
                  check.that(
                      run.aggregating
                          .asyncAdd((long) x)
                          .thenCompose(v -> run.aggregating.asyncGet()),
                      Long.toString(m.aggregated));
                  break;
              }
            });
      }
      run.drain();
      assertThat(mismatches).as("seed " + seed).isEmpty();
      assertThat(checked.get()).as("callbacks run, seed " + seed).isEqualTo(expected.get());
      assertThat(readThreadsStarted(operator)).as("point reads ran on the read pool").isTrue();
      handle = checkpoint(run);
    } finally {
      run.close();
    }

    // Restored at a changed parallelism: two backends, each importing its half of the key groups.
    for (KeyGroupRange half : new KeyGroupRange[] {FIRST_HALF, SECOND_HALF}) {
      Run restored =
          new Run(
              operator + "-" + half.getStartKeyGroup(),
              mailboxExecutor,
              half,
              Collections.singletonList(handle));
      try {
        for (Map.Entry<Integer, KeyModel> e : model.entrySet()) {
          int key = e.getKey();
          if (!half.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, MAX_PARALLELISM))) {
            continue;
          }
          KeyModel m = e.getValue();
          Checker check = new Checker("restored key " + key, mismatches, expected, checked);
          restored.record(
              "restore-" + key,
              key,
              () -> {
                check.that(restored.value.asyncValue(), m.value);
                check.that(collect(restored.list.asyncGet()), new ArrayList<>(m.list));
                check.that(entries(restored.map), new TreeMap<>(m.map));
                check.that(restored.reducing.asyncGet(), m.reduced);
                check.that(
                    restored.aggregating.asyncGet(),
                    m.aggregated == null ? null : Long.toString(m.aggregated));
              });
        }
        restored.drain();
      } finally {
        restored.close();
      }
    }
    assertThat(mismatches).as("after restore, seed " + seed).isEmpty();
    assertThat(checked.get()).as("callbacks run, seed " + seed).isEqualTo(expected.get());
  }

  /**
   * Backends given fewer key groups than their range ends at, as Flink's {@code
   * StateBackendTestV2Base} builds them (the range size), while the controller computes key groups
   * with the real maximum parallelism: two such sources ([0,4] and [5,9] of 10, each told 5 key
   * groups) restore into three targets, the middle one joining both, with exact values of every
   * key. The shards must address buckets by absolute key group and take their bucket count from
   * their ranges and restored snapshots.
   */
  @Test
  void rangeSizedKeyGroupCountsRestoreIntoThreeTargets() {
    assertTimeoutPreemptively(
        Duration.ofSeconds(60),
        this::rangeSizedScenario,
        () -> "async framework failure: " + stackTrace(failure.get()) + asyncThreads());
  }

  private void rangeSizedScenario() throws Exception {
    int maxParallelism = 10;
    TaskMailboxImpl mailbox = new TaskMailboxImpl(Thread.currentThread());
    MailboxExecutor mailboxExecutor =
        new MailboxExecutorImpl(mailbox, 0, StreamTaskActionExecutor.IMMEDIATE);
    List<String> mismatches = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger expected = new AtomicInteger();
    AtomicInteger checked = new AtomicInteger();
    List<KeyedStateHandle> handles = new ArrayList<>();
    for (KeyGroupRange source :
        new KeyGroupRange[] {KeyGroupRange.of(0, 4), KeyGroupRange.of(5, 9)}) {
      Run run =
          new Run(
              "range-sized-source-" + source.getStartKeyGroup(),
              mailboxExecutor,
              source,
              Collections.emptyList(),
              source.getNumberOfKeyGroups(),
              maxParallelism);
      try {
        for (int key = 0; key < KEYS; key++) {
          if (!source.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism))) {
            continue;
          }
          int k = key;
          run.record(
              "write-" + key,
              key,
              () -> {
                run.value.asyncUpdate(k * 3);
                run.map.asyncPut(k % 7, "m" + k);
                run.list.asyncAdd(k);
              });
        }
        run.drain();
        handles.add(checkpoint(run));
      } finally {
        run.close();
      }
    }
    Map<KeyGroupRange, Integer> keysPerTarget = new HashMap<>();
    for (KeyGroupRange target :
        new KeyGroupRange[] {
          KeyGroupRange.of(0, 3), KeyGroupRange.of(4, 6), KeyGroupRange.of(7, 9)
        }) {
      Run restored =
          new Run(
              "range-sized-target-" + target.getStartKeyGroup(),
              mailboxExecutor,
              target,
              handles,
              target.getNumberOfKeyGroups(),
              maxParallelism);
      try {
        for (int key = 0; key < KEYS; key++) {
          if (!target.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism))) {
            continue;
          }
          keysPerTarget.merge(target, 1, Integer::sum);
          int k = key;
          Checker check =
              new Checker("target " + target + " key " + key, mismatches, expected, checked);
          restored.record(
              "read-" + key,
              key,
              () -> {
                check.that(restored.value.asyncValue(), k * 3);
                check.that(entries(restored.map), Collections.singletonMap(k % 7, "m" + k));
                check.that(collect(restored.list.asyncGet()), Collections.singletonList(k));
              });
        }
        restored.drain();
      } finally {
        restored.close();
      }
    }
    assertThat(keysPerTarget).as("keys checked per target").hasSize(3);
    assertThat(mismatches).isEmpty();
    assertThat(checked.get()).as("callbacks run").isEqualTo(expected.get());
  }

  /** Where Cobble's executor threads are, for a run that timed out. */
  private static String asyncThreads() {
    StringBuilder b = new StringBuilder();
    Thread.getAllStackTraces()
        .forEach(
            (t, stack) -> {
              if (t.getName().startsWith("cobble-async")) {
                b.append('\n').append(t.getName()).append(' ').append(t.getState());
                for (StackTraceElement e : stack) {
                  b.append("\n  ").append(e);
                }
              }
            });
    return b.toString();
  }

  private static String stackTrace(Throwable t) {
    if (t == null) {
      return "none";
    }
    java.io.StringWriter out = new java.io.StringWriter();
    t.printStackTrace(new java.io.PrintWriter(out));
    return out.toString();
  }

  private static boolean readThreadsStarted(String operator) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().startsWith("cobble-async-read-" + operator));
  }

  private static KeyedStateHandle checkpoint(Run run) throws Exception {
    CheckpointStreamFactory streams =
        new JobManagerCheckpointStorage()
            .createCheckpointStorage(new JobID())
            .resolveCheckpointStorageLocation(1L, CheckpointStorageLocationReference.getDefault());
    RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot =
        run.backend.snapshot(1L, 0L, streams, CheckpointOptions.forCheckpointWithDefaultLocation());
    snapshot.run();
    KeyedStateHandle handle = snapshot.get().getJobManagerOwnedSnapshot();
    assertThat(handle).as("the checkpoint's keyed state").isNotNull();
    return handle;
  }

  private static <T> StateFuture<List<T>> collect(StateFuture<StateIterator<T>> iterator) {
    return iterator.thenCompose(
        it -> {
          List<T> items = new ArrayList<>();
          return it.onNext(
                  (T item) -> {
                    items.add(item);
                  })
              .thenApply(v -> items);
        });
  }

  private static StateFuture<Map<Integer, String>> entries(MapState<Integer, String> map) {
    return map.asyncEntries()
        .thenCompose(
            it -> {
              Map<Integer, String> items = new TreeMap<>();
              return it.onNext(
                      (Map.Entry<Integer, String> e) -> {
                        items.put(e.getKey(), e.getValue());
                      })
                  .thenApply(v -> items);
            });
  }

  /** Compares a future's result to an expected value once the controller completes it. */
  private static final class Checker {
    final String where;
    final List<String> mismatches;
    final AtomicInteger expected;
    final AtomicInteger checked;

    Checker(String where, List<String> mismatches, AtomicInteger expected, AtomicInteger checked) {
      this.where = where;
      this.mismatches = mismatches;
      this.expected = expected;
      this.checked = checked;
    }

    <T> void that(StateFuture<T> future, Object want) {
      expected.incrementAndGet();
      future.thenAccept(
          got -> {
            checked.incrementAndGet();
            if (!Objects.equals(got, want)) {
              mismatches.add(where + ": got " + got + ", expected " + want);
            }
          });
    }
  }
}
