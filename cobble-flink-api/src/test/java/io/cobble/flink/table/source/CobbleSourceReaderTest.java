package io.cobble.flink.table.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.flink.table.ScanMode;
import io.cobble.flink.table.TableStorage;
import io.cobble.flink.table.codec.RowProjection;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.reader.Reader;
import io.cobble.reader.ScanSplit;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.testing.table.TestSinkTable;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.OperatorIOMetricGroup;
import org.apache.flink.metrics.groups.SourceReaderMetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The split reader on real tables: checkpoints mid-split lose and repeat nothing. */
class CobbleSourceReaderTest {

  private static final RowType ROW =
      RowType.of(
          new org.apache.flink.table.types.logical.LogicalType[] {
            new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)
          },
          new String[] {"id", "name"});
  private static final int[] KEY = {0};

  @TempDir Path dir;

  private TestSinkTable table(int retention) throws Exception {
    return new TestSinkTable(
        dir.resolve("table"), dir.resolve("work"), ROW, List.of("id"), 8, 2, retention);
  }

  private SourceSettings settings(ScanMode mode) {
    return new SourceSettings(
        TableStorage.fromTableOptions(dir.resolve("table").toUri(), Map.of()),
        SourceSettings.LATEST,
        mode,
        100,
        1 << 20);
  }

  private CobbleSourceReader reader(ScanMode mode) {
    CobbleSourceReader reader =
        new CobbleSourceReader(
            settings(mode),
            RowDecoder.typed(RowProjection.of(ROW, KEY, null, new int[] {0, 1})),
            UnregisteredMetricsGroup.createSourceReaderMetricGroup(),
            event -> {});
    reader.start();
    return reader;
  }

  private List<CobbleSourceSplit> splitsOf(long globalId, List<ScanSplit> previous)
      throws Exception {
    try (Storage storage = settings(ScanMode.BATCH).table().open();
        Reader reader = Reader.open(storage, globalId, settings(ScanMode.BATCH).readerConfig())) {
      List<ScanSplit> current = reader.splits(TableLayout.FAMILY);
      return previous == null
          ? SplitPlanner.full(globalId, 8, current)
          : SplitPlanner.changes(new SnapshotStore(storage), globalId, 8, current, previous);
    }
  }

  private List<ScanSplit> scanSplitsOf(long globalId) throws Exception {
    try (Storage storage = settings(ScanMode.BATCH).table().open();
        Reader reader = Reader.open(storage, globalId, settings(ScanMode.BATCH).readerConfig())) {
      return reader.splits(TableLayout.FAMILY);
    }
  }

  /** Reads up to {@code limit} rows (all when negative) into {@code seen}, as id -> name. */
  private static void read(
      CobbleSourceReader reader, int limit, Map<Long, String> seen, List<Long> order)
      throws Exception {
    Collecting output = new Collecting();
    int read = 0;
    while (limit < 0 || read < limit) {
      InputStatus status = reader.pollNext(output);
      if (status != InputStatus.MORE_AVAILABLE) {
        break;
      }
      read++;
    }
    for (RowData row : output.rows) {
      long id = row.getLong(0);
      assertTrue(!order.contains(id), "row " + id + " emitted twice");
      order.add(id);
      seen.put(id, row.isNullAt(1) ? null : row.getString(1).toString());
    }
  }

  private static List<CobbleSourceSplit> roundTrip(List<CobbleSourceSplit> splits)
      throws Exception {
    CobbleSourceSplitSerializer serializer = new CobbleSourceSplitSerializer();
    List<CobbleSourceSplit> restored = new ArrayList<>();
    for (CobbleSourceSplit split : splits) {
      restored.add(serializer.deserialize(serializer.getVersion(), serializer.serialize(split)));
    }
    return restored;
  }

  @Test
  void aReaderRestoredMidSplitNeitherLosesNorRepeatsRows() throws Exception {
    long globalId;
    try (TestSinkTable table = table(0)) {
      for (long id = 0; id < 500; id++) {
        table.upsert(id, id % 7 == 0 ? null : StringData.fromString("n" + id));
      }
      globalId = table.commit();
    }
    Map<Long, String> seen = new TreeMap<>();
    List<Long> order = new ArrayList<>();
    List<CobbleSourceSplit> state;
    CobbleSourceReader first = reader(ScanMode.BATCH);
    try {
      first.addSplits(splitsOf(globalId, null));
      first.notifyNoMoreSplits();
      read(first, 137, seen, order);
      state = roundTrip(first.snapshotState(1));
      // Rows after the checkpoint that a failed reader emitted are replayed by the restored one.
      read(first, 20, new TreeMap<>(), new ArrayList<>());
    } finally {
      first.close();
    }
    assertEquals(137, seen.size());
    assertTrue(state.get(0).scan().resumeAfter() != null, "the split in progress carries a key");

    CobbleSourceReader restored = reader(ScanMode.BATCH);
    try {
      restored.addSplits(state);
      restored.notifyNoMoreSplits();
      read(restored, -1, seen, order);
      assertEquals(InputStatus.END_OF_INPUT, restored.pollNext(new Collecting()));
    } finally {
      restored.close();
    }
    assertEquals(500, seen.size());
    assertEquals(500, order.size(), "no row twice");
    for (long id = 0; id < 500; id++) {
      assertEquals(id % 7 == 0 ? null : "n" + id, seen.get(id));
    }
  }

  @Test
  void changeSplitsEmitNewAndChangedRowsOnlyAndResumeExactly() throws Exception {
    long first;
    long second;
    try (TestSinkTable table = table(0)) {
      for (long id = 0; id < 300; id++) {
        table.upsert(id, StringData.fromString("v1-" + id));
      }
      first = table.commit();
      for (long id = 0; id < 300; id += 10) {
        table.upsert(id, StringData.fromString("v2-" + id)); // changed
      }
      table.upsert(5L, StringData.fromString("v1-5")); // rewritten with the same value
      table.delete(7L, null); // deleted: not emitted
      for (long id = 300; id < 320; id++) {
        table.upsert(id, StringData.fromString("v2-" + id)); // new
      }
      second = table.commit();
    }
    List<CobbleSourceSplit> changes = splitsOf(second, scanSplitsOf(first));
    assertTrue(changes.stream().allMatch(CobbleSourceSplit::isChangeSplit));

    Map<Long, String> seen = new TreeMap<>();
    List<Long> order = new ArrayList<>();
    CobbleSourceReader reader = reader(ScanMode.STREAMING);
    List<CobbleSourceSplit> state;
    try {
      reader.addSplits(changes);
      read(reader, 17, seen, order);
      state = roundTrip(reader.snapshotState(2));
    } finally {
      reader.close();
    }
    CobbleSourceReader restored = reader(ScanMode.STREAMING);
    try {
      restored.addSplits(state);
      read(restored, -1, seen, order);
      assertEquals(InputStatus.NOTHING_AVAILABLE, restored.pollNext(new Collecting()));
    } finally {
      restored.close();
    }
    Map<Long, String> expected = new TreeMap<>();
    for (long id = 0; id < 300; id += 10) {
      expected.put(id, "v2-" + id);
    }
    for (long id = 300; id < 320; id++) {
      expected.put(id, "v2-" + id);
    }
    assertEquals(expected, seen);
    assertEquals(expected.size(), order.size(), "no row twice");
  }

  @Test
  void aSnapshotWithoutWritesGivesNoSplits() throws Exception {
    long first;
    long second;
    try (TestSinkTable table = table(0)) {
      table.upsert(1L, StringData.fromString("a"));
      first = table.commit();
      second = table.commit();
    }
    assertEquals(Collections.emptyList(), splitsOf(second, scanSplitsOf(first)));
  }

  @Test
  void anExpiredPreviousSnapshotFallsBackToEveryRow() throws Exception {
    long first;
    long second;
    try (TestSinkTable table = table(1)) {
      for (long id = 0; id < 50; id++) {
        table.upsert(id, StringData.fromString("v1-" + id));
      }
      first = table.commit();
      List<ScanSplit> base = scanSplitsOf(first);
      table.upsert(3L, StringData.fromString("v2-3"));
      second = table.commit();
      Map<Long, String> seen = new TreeMap<>();
      CobbleSourceReader reader = reader(ScanMode.STREAMING);
      try {
        reader.addSplits(splitsOf(second, base));
        read(reader, -1, seen, new ArrayList<>());
      } finally {
        reader.close();
      }
      // Retention 1 expired the first snapshot: every row of the changed shards comes again.
      assertEquals("v2-3", seen.get(3L));
      assertTrue(seen.size() > 1, "rows of the changed shard beside the change: " + seen.keySet());
    }
  }

  @Test
  void aStepAfterASmallCommitReadsOnlyTheFilesItChanged() throws Exception {
    long first;
    long second;
    try (TestSinkTable table = table(0)) {
      for (long id = 0; id < 20_000; id++) {
        table.upsert(id, StringData.fromString("v1-" + id + "-padding-padding-padding"));
      }
      table.compactAll();
      first = table.commit();
      table.upsert(17L, StringData.fromString("v2-17")); // changed
      table.upsert(18L, StringData.fromString("v1-18-padding-padding-padding")); // unchanged
      table.upsert(50_000L, StringData.fromString("v2-new")); // new
      second = table.commit();
    }
    List<CobbleSourceSplit> changes = splitsOf(second, scanSplitsOf(first));
    Map<String, Gauge<?>> changeGauges = new TreeMap<>();
    Map<Long, String> seen = readAll(changes, changeGauges);
    Map<Long, String> expected = new TreeMap<>();
    expected.put(17L, "v2-17");
    expected.put(50_000L, "v2-new");
    assertEquals(expected, seen);

    Map<String, Gauge<?>> fullGauges = new TreeMap<>();
    assertEquals(20_001, readAll(splitsOf(second, null), fullGauges).size());
    long changeBlocks = (Long) changeGauges.get("cobble.blockCacheMisses").getValue();
    long fullBlocks = (Long) fullGauges.get("cobble.blockCacheMisses").getValue();
    assertTrue(
        changeBlocks * 10 < fullBlocks,
        "the step read " + changeBlocks + " blocks, the table has " + fullBlocks);
  }

  /** Reads {@code splits} with a fresh reader whose gauges land in {@code gauges}. */
  private Map<Long, String> readAll(List<CobbleSourceSplit> splits, Map<String, Gauge<?>> gauges)
      throws Exception {
    Map<Long, String> seen = new TreeMap<>();
    CobbleSourceReader reader =
        new CobbleSourceReader(
            settings(ScanMode.STREAMING),
            RowDecoder.typed(RowProjection.of(ROW, KEY, null, new int[] {0, 1})),
            metricGroup(new SimpleCounter(), new SimpleCounter(), gauges),
            event -> {});
    try {
      reader.start();
      reader.addSplits(splits);
      read(reader, -1, seen, new ArrayList<>());
      gauges.replaceAll((name, gauge) -> snapshotOf(gauge));
    } finally {
      reader.close();
    }
    return seen;
  }

  /** A gauge frozen at its current value (the reader's gauges read 0 once it is closed). */
  private static Gauge<?> snapshotOf(Gauge<?> gauge) {
    Object value = gauge.getValue();
    return () -> value;
  }

  @Test
  void theReaderReportsTheSplitsItHoldsAtStartAndEachFinishedOne() throws Exception {
    long globalId;
    try (TestSinkTable table = table(0)) {
      for (long id = 0; id < 40; id++) {
        table.upsert(id, StringData.fromString("x"));
      }
      globalId = table.commit();
    }
    List<CobbleSourceSplit> splits = splitsOf(globalId, null);
    List<SourceEvent> events = new ArrayList<>();
    CobbleSourceReader reader =
        new CobbleSourceReader(
            settings(ScanMode.STREAMING),
            RowDecoder.typed(RowProjection.of(ROW, KEY, null, new int[] {0, 1})),
            UnregisteredMetricsGroup.createSourceReaderMetricGroup(),
            events::add);
    try {
      // Splits added before the start are the restored ones.
      reader.addSplits(splits.subList(0, 1));
      reader.start();
      reader.addSplits(splits.subList(1, 2));
      assertEquals(1, events.size());
      assertEquals(List.of(splits.get(0).splitId()), ((SplitsHeldEvent) events.get(0)).splitIds());
      read(reader, -1, new TreeMap<>(), new ArrayList<>());
      List<String> finished = new ArrayList<>();
      for (SourceEvent event : events.subList(1, events.size())) {
        finished.add(((SplitFinishedEvent) event).splitId());
      }
      assertEquals(List.of(splits.get(0).splitId(), splits.get(1).splitId()), finished);
    } finally {
      reader.close();
    }
  }

  @Test
  void metricsCountRecordsAndBytesInAndExposeTheReader() throws Exception {
    long globalId;
    try (TestSinkTable table = table(0)) {
      for (long id = 0; id < 40; id++) {
        table.upsert(id, StringData.fromString("x"));
      }
      globalId = table.commit();
    }
    SimpleCounter records = new SimpleCounter();
    SimpleCounter bytes = new SimpleCounter();
    Map<String, Gauge<?>> gauges = new TreeMap<>();
    CobbleSourceReader reader =
        new CobbleSourceReader(
            settings(ScanMode.BATCH),
            RowDecoder.typed(RowProjection.of(ROW, KEY, null, new int[] {0, 1})),
            metricGroup(records, bytes, gauges),
            event -> {});
    try {
      reader.start();
      reader.addSplits(splitsOf(globalId, null));
      reader.notifyNoMoreSplits();
      read(reader, -1, new TreeMap<>(), new ArrayList<>());
      assertEquals(40, records.getCount());
      // Key: 8 bytes; value column: a tag byte and "x".
      assertEquals(40 * (8 + 2), bytes.getCount());
      assertEquals(globalId, gauges.get("cobble.globalSnapshotId").getValue());
      assertEquals(2L, gauges.get("cobble.openShards").getValue());
      assertTrue((Long) gauges.get("cobble.blockCacheMisses").getValue() > 0, gauges.toString());
      assertTrue((Long) gauges.get("cobble.blockCacheUsageBytes").getValue() > 0);
      assertTrue(gauges.containsKey("cobble.blockCacheHits"));
    } finally {
      reader.close();
    }
  }

  @Test
  void aProjectedScanReadsOnlyTheCobbleColumnsOfItsFields() throws Exception {
    RowType wide =
        RowType.of(
            new org.apache.flink.table.types.logical.LogicalType[] {
              new BigIntType(false), new IntType(), new VarCharType(VarCharType.MAX_LENGTH)
            },
            new String[] {"id", "small", "big"});
    String big = "b".repeat(1000);
    long globalId;
    try (TestSinkTable table =
        new TestSinkTable(
            dir.resolve("table"), dir.resolve("work"), wide, List.of("id"), 8, 2, 0)) {
      for (long id = 0; id < 50; id++) {
        table.upsert(id, (int) id * 3, StringData.fromString(big + id));
      }
      globalId = table.commit();
    }
    SimpleCounter bytes = new SimpleCounter();
    Collecting output = new Collecting();
    CobbleSourceReader reader =
        new CobbleSourceReader(
            settings(ScanMode.BATCH),
            // SELECT small, id: Cobble column 0 only; the 1 KB column 1 is neither read nor copied.
            RowDecoder.typed(RowProjection.of(wide, KEY, null, new int[] {1, 0})),
            metricGroup(new SimpleCounter(), bytes, new TreeMap<>()),
            event -> {});
    try {
      reader.start();
      reader.addSplits(splitsOf(globalId, null));
      reader.notifyNoMoreSplits();
      while (reader.pollNext(output) == InputStatus.MORE_AVAILABLE) {}
    } finally {
      reader.close();
    }
    assertEquals(50, output.rows.size());
    Map<Long, Integer> small = new TreeMap<>();
    for (RowData row : output.rows) {
      assertEquals(2, row.getArity());
      small.put(row.getLong(1), row.getInt(0));
    }
    for (long id = 0; id < 50; id++) {
      assertEquals((int) id * 3, small.get(id));
    }
    // Key: 8 bytes; column 0: a tag byte and 4 bytes of INT.
    assertEquals(50 * (8 + 5), bytes.getCount());
  }

  /** A reader metric group recording the IO counters and every gauge registered below it. */
  private static SourceReaderMetricGroup metricGroup(
      Counter records, Counter bytes, Map<String, Gauge<?>> gauges) {
    OperatorIOMetricGroup io =
        proxy(
            OperatorIOMetricGroup.class,
            (method, args) ->
                method.equals("getNumRecordsInCounter")
                    ? records
                    : method.equals("getNumBytesInCounter") ? bytes : new SimpleCounter());
    return proxy(
        SourceReaderMetricGroup.class,
        (method, args) -> method.equals("getIOMetricGroup") ? io : group("", gauges, method, args));
  }

  private static Object group(
      String prefix, Map<String, Gauge<?>> gauges, String method, Object[] args) {
    switch (method) {
      case "addGroup":
        String name = prefix + args[0] + ".";
        return proxy(MetricGroup.class, (m, a) -> group(name, gauges, m, a));
      case "gauge":
        gauges.put(prefix + args[0], (Gauge<?>) args[1]);
        return args[1];
      case "counter":
        return args.length > 1 ? args[1] : new SimpleCounter();
      default:
        throw new UnsupportedOperationException(method);
    }
  }

  private interface Call {
    Object answer(String method, Object[] args);
  }

  private static <T> T proxy(Class<T> type, Call call) {
    return type.cast(
        Proxy.newProxyInstance(
            type.getClassLoader(),
            new Class<?>[] {type},
            (p, method, args) -> call.answer(method.getName(), args)));
  }

  /** Collects emitted rows. */
  private static final class Collecting implements ReaderOutput<RowData> {
    final List<RowData> rows = new ArrayList<>();

    @Override
    public void collect(RowData record) {
      rows.add(record);
    }

    @Override
    public void collect(RowData record, long timestamp) {
      rows.add(record);
    }

    @Override
    public void emitWatermark(Watermark watermark) {}

    @Override
    public void markIdle() {}

    @Override
    public void markActive() {}

    @Override
    public SourceOutput<RowData> createOutputForSplit(String splitId) {
      return this;
    }

    @Override
    public void releaseOutputForSplit(String splitId) {}
  }
}
