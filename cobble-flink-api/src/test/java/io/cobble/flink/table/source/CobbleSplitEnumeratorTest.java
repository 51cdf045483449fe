package io.cobble.flink.table.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.flink.table.ScanMode;
import io.cobble.flink.table.TableStorage;
import io.cobble.snapshot.GlobalPin;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.testing.table.TestSinkTable;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.BiConsumer;
import org.apache.flink.api.connector.source.ReaderInfo;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The enumerator against real tables, with a context that runs its polls when told to. */
class CobbleSplitEnumeratorTest {

  private static final RowType ROW =
      RowType.of(
          new LogicalType[] {new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
          new String[] {"id", "name"});

  @TempDir Path dir;

  private TestSinkTable table() throws Exception {
    return table(0);
  }

  private TestSinkTable table(int retention) throws Exception {
    return new TestSinkTable(
        dir.resolve("table"), dir.resolve("work"), ROW, List.of("id"), 8, 2, retention);
  }

  /** The global snapshots the source's pin on the table holds. */
  private Set<Long> pinned() throws Exception {
    try (Storage storage = settings(ScanMode.STREAMING).table().open()) {
      List<GlobalPin> pins = new SnapshotStore(storage).globalPins();
      assertEquals(1, pins.size(), pins.toString());
      return pins.get(0).globalIds();
    }
  }

  private List<Long> globalIds() throws Exception {
    try (Storage storage = settings(ScanMode.STREAMING).table().open()) {
      return new SnapshotStore(storage).globalIds();
    }
  }

  private static void finishAll(CobbleSplitEnumerator enumerator, List<CobbleSourceSplit> splits) {
    for (CobbleSourceSplit split : splits) {
      enumerator.handleSourceEvent(0, new SplitFinishedEvent(split.splitId()));
    }
  }

  private SourceSettings settings(ScanMode mode) {
    return new SourceSettings(
        TableStorage.fromTableOptions(dir.resolve("table").toUri(), Map.of()),
        SourceSettings.LATEST,
        mode,
        1000,
        0);
  }

  /** Records assignments and runs the enumerator's callables only on {@link #poll()}. */
  private static final class Context {
    final Map<Integer, List<CobbleSourceSplit>> assigned = new HashMap<>();
    final Set<Integer> finished = new HashSet<>();
    final Map<Integer, ReaderInfo> readers = new HashMap<>();
    final List<Object[]> calls = new ArrayList<>();
    final int parallelism;

    Context(int parallelism) {
      this.parallelism = parallelism;
    }

    @SuppressWarnings("unchecked")
    SplitEnumeratorContext<CobbleSourceSplit> proxy() {
      return (SplitEnumeratorContext<CobbleSourceSplit>)
          Proxy.newProxyInstance(
              getClass().getClassLoader(),
              new Class<?>[] {SplitEnumeratorContext.class},
              (p, method, args) -> {
                switch (method.getName()) {
                  case "callAsync":
                    calls.add(args);
                    return null;
                  case "registeredReaders":
                    return new HashMap<>(readers);
                  case "currentParallelism":
                    return parallelism;
                  case "assignSplit":
                    assigned
                        .computeIfAbsent((Integer) args[1], k -> new ArrayList<>())
                        .add((CobbleSourceSplit) args[0]);
                    return null;
                  case "signalNoMoreSplits":
                    finished.add((Integer) args[0]);
                    return null;
                  default:
                    throw new UnsupportedOperationException(method.getName());
                }
              });
    }

    void register(int subtask) {
      readers.put(subtask, new ReaderInfo(subtask, "localhost"));
    }

    /** Runs every registered callable once and hands its result to its handler. */
    @SuppressWarnings("unchecked")
    void poll() {
      for (Object[] call : new ArrayList<>(calls)) {
        Object result = null;
        Throwable error = null;
        try {
          result = ((Callable<Object>) call[0]).call();
        } catch (Throwable t) {
          error = t;
        }
        ((BiConsumer<Object, Throwable>) call[1]).accept(result, error);
      }
    }

    List<CobbleSourceSplit> take(int subtask) {
      List<CobbleSourceSplit> splits = assigned.getOrDefault(subtask, new ArrayList<>());
      assigned.remove(subtask);
      return splits;
    }
  }

  @Test
  void batchAssignsEachRangeToItsOwnerThenSignalsTheEnd() throws Exception {
    try (TestSinkTable table = table()) {
      table.upsert(1L, StringData.fromString("a"));
      table.commit();
    }
    Context context = new Context(2);
    CobbleSplitEnumerator enumerator =
        new CobbleSplitEnumerator(
            context.proxy(), settings(ScanMode.BATCH), EnumeratorState.initial());
    enumerator.start();
    context.register(0);
    enumerator.addReader(0);
    assertTrue(context.assigned.isEmpty(), "nothing before the snapshot is cut");
    context.poll();
    List<CobbleSourceSplit> first = context.take(0);
    assertEquals(1, first.size());
    assertEquals(0, first.get(0).scan().firstBucket());
    assertEquals(Set.of(0), context.finished);

    // Reader 1 registers late; its range waited in the enumerator's state.
    EnumeratorState state = roundTrip(enumerator.snapshotState(1));
    assertEquals(1, state.pending().size());
    context.register(1);
    enumerator.addReader(1);
    List<CobbleSourceSplit> second = context.take(1);
    assertEquals(4, second.get(0).scan().firstBucket());
    assertEquals(Set.of(0, 1), context.finished);

    // A failed reader's splits come back first and go to it again when it re-registers.
    enumerator.addSplitsBack(first, 0);
    enumerator.addReader(0);
    assertEquals(first, context.take(0));
    enumerator.close();
  }

  @Test
  void streamingCutsChangedRangesOnlyAndResumesFromItsState() throws Exception {
    try (TestSinkTable table = table()) {
      for (long id = 0; id < 40; id++) {
        table.upsert(id, StringData.fromString("v1"));
      }
      long first = table.commit();
      Context context = new Context(2);
      context.register(0);
      context.register(1);
      CobbleSplitEnumerator enumerator =
          new CobbleSplitEnumerator(
              context.proxy(), settings(ScanMode.STREAMING), EnumeratorState.initial());
      enumerator.start();
      context.poll();
      List<CobbleSourceSplit> full = new ArrayList<>(context.take(0));
      full.addAll(context.take(1));
      assertEquals(2, full.size());
      assertTrue(full.stream().noneMatch(CobbleSourceSplit::isChangeSplit));
      assertTrue(full.stream().allMatch(s -> s.globalId() == first));
      context.poll();
      assertTrue(context.assigned.isEmpty(), "no new snapshot, no splits");

      // One key changes: only its shard's range is cut, as a change split against the first.
      table.upsert(7L, StringData.fromString("v2"));
      long second = table.commit();
      context.poll();
      List<CobbleSourceSplit> changes = new ArrayList<>(context.take(0));
      changes.addAll(context.take(1));
      assertEquals(1, changes.size(), changes.toString());
      CobbleSourceSplit change = changes.get(0);
      assertTrue(change.isChangeSplit());
      assertEquals(second, change.globalId());
      assertEquals(first, baseSnapshotOf(full, change));
      assertTrue(context.finished.isEmpty(), "a streaming source never ends");

      // A restored enumerator diffs the next snapshot against the second, not the first.
      EnumeratorState state = roundTrip(enumerator.snapshotState(5));
      enumerator.close();
      Context restoredContext = new Context(2);
      restoredContext.register(0);
      restoredContext.register(1);
      CobbleSplitEnumerator restored =
          new CobbleSplitEnumerator(restoredContext.proxy(), settings(ScanMode.STREAMING), state);
      restored.start();
      restoredContext.poll();
      assertTrue(restoredContext.assigned.isEmpty(), "the second snapshot was cut already");
      table.upsert(7L, StringData.fromString("v3"));
      long third = table.commit();
      restoredContext.poll();
      List<CobbleSourceSplit> next = new ArrayList<>(restoredContext.take(0));
      next.addAll(restoredContext.take(1));
      assertEquals(1, next.size());
      assertEquals(third, next.get(0).globalId());
      assertEquals(change.scan().snapshotId(), next.get(0).previous().get(0).snapshotId());
      restored.close();
    }
  }

  @Test
  void theSnapshotsSplitsReadStayPinnedUntilACheckpointAfterTheirEndCompletes() throws Exception {
    try (TestSinkTable table = table(1)) {
      for (long id = 0; id < 40; id++) {
        table.upsert(id, StringData.fromString("v1"));
      }
      long g1 = table.commit();
      Context context = new Context(1);
      context.register(0);
      CobbleSplitEnumerator enumerator =
          new CobbleSplitEnumerator(
              context.proxy(), settings(ScanMode.STREAMING), EnumeratorState.initial());
      enumerator.start();
      context.poll();
      List<CobbleSourceSplit> full = context.take(0);
      assertEquals(2, full.size());
      assertEquals(Set.of(g1), pinned());
      enumerator.snapshotState(1);

      // Retention 1 keeps the pinned snapshot beside the newest; the one in between goes.
      table.upsert(7L, StringData.fromString("v2"));
      table.commit();
      table.upsert(8L, StringData.fromString("v2"));
      long g3 = table.commit();
      assertEquals(List.of(g1, g3), globalIds());
      context.poll();
      List<CobbleSourceSplit> changes = context.take(0);
      assertTrue(changes.stream().allMatch(CobbleSourceSplit::isChangeSplit));
      assertEquals(Set.of(g1, g3), pinned());

      // Finished after checkpoint 1: kept until a checkpoint taken after that completes.
      finishAll(enumerator, full);
      finishAll(enumerator, changes);
      EnumeratorState state = roundTrip(enumerator.snapshotState(2));
      assertTrue(state.outstanding().isEmpty(), "checkpoint 2 no longer needs them");
      enumerator.notifyCheckpointComplete(1);
      context.poll();
      assertEquals(Set.of(g1, g3), pinned());
      enumerator.notifyCheckpointComplete(2);
      context.poll();
      assertEquals(Set.of(g3), pinned(), "only the base of the next diff");
      table.upsert(9L, StringData.fromString("v2"));
      long g4 = table.commit();
      assertEquals(List.of(g3, g4), globalIds());
      enumerator.close();
    }
  }

  @Test
  void aRestoredEnumeratorReleasesRestoredSplitsNoReaderHoldsOnceEveryReaderReported()
      throws Exception {
    try (TestSinkTable table = table(1)) {
      for (long id = 0; id < 40; id++) {
        table.upsert(id, StringData.fromString("v1"));
      }
      table.commit();
      Context context = new Context(2);
      context.register(0);
      context.register(1);
      CobbleSplitEnumerator enumerator =
          new CobbleSplitEnumerator(
              context.proxy(), settings(ScanMode.STREAMING), EnumeratorState.initial());
      enumerator.start();
      context.poll();
      CobbleSourceSplit kept = context.take(0).get(0);
      CobbleSourceSplit done = context.take(1).get(0);
      EnumeratorState state = roundTrip(enumerator.snapshotState(1));
      assertEquals(Set.of(kept.splitId(), done.splitId()), state.outstanding().keySet());
      enumerator.close();

      Context restoredContext = new Context(2);
      CobbleSplitEnumerator restored =
          new CobbleSplitEnumerator(restoredContext.proxy(), settings(ScanMode.STREAMING), state);
      restored.start();
      restored.handleSourceEvent(0, new SplitsHeldEvent(List.of(kept.splitId())));
      assertEquals(
          Set.of(kept.splitId(), done.splitId()),
          restored.snapshotState(2).outstanding().keySet(),
          "reader 1 has not reported yet");
      restored.handleSourceEvent(1, new SplitsHeldEvent(List.of()));
      assertEquals(Set.of(kept.splitId()), restored.snapshotState(3).outstanding().keySet());
      restored.close();
    }
  }

  /** The global snapshot id of the full split whose shard snapshot {@code change} diffs against. */
  private static long baseSnapshotOf(List<CobbleSourceSplit> full, CobbleSourceSplit change) {
    for (CobbleSourceSplit split : full) {
      if (split.scan().equals(change.previous().get(0))) {
        return split.globalId();
      }
    }
    throw new AssertionError("no base for " + change);
  }

  private static EnumeratorState roundTrip(EnumeratorState state) throws Exception {
    EnumeratorStateSerializer serializer = new EnumeratorStateSerializer();
    return serializer.deserialize(serializer.getVersion(), serializer.serialize(state));
  }
}
