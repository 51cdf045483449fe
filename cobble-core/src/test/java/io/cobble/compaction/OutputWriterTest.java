package io.cobble.compaction;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.cache.BlockCache;
import io.cobble.iterator.KvIterator;
import io.cobble.memtable.SkipListMemTable;
import io.cobble.row.ColumnLayout;
import io.cobble.row.RowState;
import io.cobble.schema.Column;
import io.cobble.schema.ColumnSpec;
import io.cobble.schema.FamilySchema;
import io.cobble.schema.Schema;
import io.cobble.sst.Table;
import io.cobble.sst.TableOptions;
import io.cobble.sst.TableReadOptions;
import io.cobble.storage.DataFile;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import io.cobble.version.VersionSet;
import io.cobble.vlog.ValueLogFile;
import io.cobble.vlog.ValueLogReader;
import io.cobble.vlog.ValuePointer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link OutputWriter} against real table and value-log files: it cuts tables at the target size
 * into a sorted run that reads back every row, moves large values into one value log (with
 * per-table reference counts), records expiry and merge write times per table, and leaves no file
 * behind when abandoned.
 */
class OutputWriterTest {
  private static final ColumnLayout LAYOUT =
      new ColumnLayout(
          new FamilySchema(
              0,
              "default",
              Arrays.asList(new Column(0, ColumnSpec.of("a")), new Column(1, ColumnSpec.of("b"))),
              2),
          name -> null);
  private static final long TARGET = 8 << 10;

  @TempDir Path dir;
  private VersionSet versions;
  private BlockCache cache;
  private final List<Table> opened = new ArrayList<>();

  @BeforeEach
  void setUp() {
    versions = new VersionSet(dir, 16, 4, 1, 0, Schema.initial(), false);
    // The memtable is never written: the version only answers which value-log numbers are taken.
    versions.initialize(
        new SkipListMemTable(1, (key, older, newer) -> newer),
        List.of(Tree.empty(4)),
        List.of(),
        Set.of(),
        Set.of());
    cache = new BlockCache(1 << 20);
  }

  @AfterEach
  void closeTables() {
    opened.forEach(Table::close);
    versions.close();
  }

  private OutputWriter writer(long separationThreshold) {
    TableOptions options =
        TableOptions.builder().blockSize(1024).restartInterval(8).bloomBitsPerKey(10).build();
    return new OutputWriter(
        versions,
        0,
        7,
        options,
        TARGET,
        separationThreshold,
        (n, written) -> {
          Table t = Table.open(versions.tablePath(n), n, cache, TableReadOptions.UNPINNED);
          opened.add(t);
          return t;
        });
  }

  private static byte[] key(int i) {
    return String.format("k%06d", i).getBytes(UTF_8);
  }

  private static byte[] value(int i, int length) {
    byte[] v = new byte[length];
    Arrays.fill(v, (byte) ('a' + i % 26));
    Bytes.putInt(v, 0, i);
    return v;
  }

  private static RowState put(RowState row, int i, int length, long expiry) {
    row.reset(LAYOUT);
    row.set(0, RowState.PUT, value(i, length), false, expiry, 0);
    return row;
  }

  @Test
  void cutsASortedRunAtTheTargetSizeThatReadsBackEveryRow() {
    int n = 3000;
    List<FileMeta> out;
    long written;
    try (OutputWriter w = writer(0)) {
      RowState row = new RowState();
      for (int i = 0; i < n; i++) {
        w.add(key(i), put(row, i, 40, 0));
      }
      out = w.finish();
      written = w.bytesWritten();
      assertTrue(w.vlogs().isEmpty(), "no value is separated with threshold 0");
    }
    assertTrue(out.size() >= 4, "about " + n * 50 / TARGET + " tables expected, got " + out.size());
    long sizes = 0;
    for (int f = 0; f < out.size(); f++) {
      FileMeta m = out.get(f);
      sizes += m.size();
      assertEquals(Files.exists(versions.tablePath(m.number())), true);
      assertEquals(m.size(), versions.tablePath(m.number()).toFile().length());
      assertEquals(7, m.properties().schemaId());
      assertEquals(0, m.family());
      if (f < out.size() - 1) {
        assertTrue(
            Bytes.compare(m.largest(), out.get(f + 1).smallest()) < 0, "tables do not overlap");
        assertTrue(m.size() >= TARGET, "a cut table reached the target: " + m.size());
      }
      assertTrue(m.size() < 2 * TARGET, "a table is cut near the target: " + m.size());
    }
    assertEquals(sizes, written, "bytesWritten counts every table");
    RowState read = new RowState();
    int i = 0;
    for (FileMeta m : out) {
      assertEquals(m.properties().entries(), countEntries(m));
      try (KvIterator it = m.table().iterator(0)) {
        for (it.seekToFirst(); it.valid(); it.next()) {
          assertArrayEquals(key(i), it.key());
          read.decode(LAYOUT, it.value());
          assertEquals(RowState.PUT, read.kind(0));
          assertArrayEquals(value(i, 40), read.value(0), "row " + i);
          assertEquals(RowState.ABSENT, read.kind(1));
          i++;
        }
      }
    }
    assertEquals(n, i, "every row is in exactly one table");
  }

  private static byte[] bucketKey(int bucket, int i) {
    byte[] k = new byte[8];
    k[0] = (byte) (bucket >> 8);
    k[1] = (byte) bucket;
    Bytes.putInt(k, 2, i);
    return k;
  }

  @Test
  void cutsWhereTheNextKeyLiesInAnotherOwnedRangeSoNoTableSpansAGap() {
    OwnedBuckets owned = new OwnedBuckets(new int[] {0, 1, 5, 6, 9, 9});
    int[] buckets = {0, 1, 5, 6, 9};
    List<FileMeta> out;
    try (OutputWriter w = writer(0).cutAt(owned)) {
      RowState row = new RowState();
      for (int b : buckets) {
        for (int i = 0; i < 10; i++) {
          w.add(bucketKey(b, i), put(row, i, 40, 0));
        }
      }
      out = w.finish();
    }
    assertEquals(3, out.size(), "one small table per owned range: " + out);
    int[][] spans = {{0, 1}, {5, 6}, {9, 9}};
    for (int f = 0; f < out.size(); f++) {
      assertEquals(spans[f][0], Bytes.getShort(out.get(f).smallest(), 0), "table " + f);
      assertEquals(spans[f][1], Bytes.getShort(out.get(f).largest(), 0), "table " + f);
      assertTrue(owned.holdsOnlyOwned(out.get(f)));
    }
  }

  private static long countEntries(FileMeta m) {
    long c = 0;
    try (KvIterator it = m.table().iterator(0)) {
      for (it.seekToFirst(); it.valid(); it.next()) {
        c++;
      }
    }
    return c;
  }

  @Test
  void separatesLargeValuesIntoOneValueLogWithReferenceCountsPerTable() {
    int n = 600;
    List<FileMeta> out;
    List<ValueLogFile> logs;
    long written;
    try (OutputWriter w = writer(100)) {
      RowState row = new RowState();
      for (int i = 0; i < n; i++) {
        // Every third row carries a large value in column 1 besides a small one in column 0.
        row.reset(LAYOUT);
        row.set(0, RowState.PUT, value(i, 20), false, 0, 0);
        if (i % 3 == 0) {
          row.set(1, RowState.PUT, value(i, 500), false, 0, 0);
        }
        w.add(key(i), row);
      }
      out = w.finish();
      logs = w.vlogs();
      written = w.bytesWritten();
    }
    assertEquals(1, logs.size(), "one value log per writer");
    ValueLogFile log = logs.get(0);
    assertEquals(n / 3, log.entries());
    assertEquals(log.size(), versions.vlogPath(log.number()).toFile().length());
    assertEquals(
        out.stream().mapToLong(FileMeta::size).sum() + log.size(),
        written,
        "bytesWritten counts tables and the value log");
    RowState read = new RowState();
    int i = 0;
    try (ValueLogReader reader =
        new ValueLogReader(DataFile.local(versions.vlogPath(log.number())), log.size())) {
      for (FileMeta m : out) {
        long pointers = 0;
        try (KvIterator it = m.table().iterator(0)) {
          for (it.seekToFirst(); it.valid(); it.next(), i++) {
            read.decode(LAYOUT, it.value());
            assertFalse(read.isPointer(0), "a small value stays inline");
            assertArrayEquals(value(i, 20), read.value(0));
            if (i % 3 == 0) {
              assertTrue(read.isPointer(1), "row " + i + ": a large value is separated");
              assertEquals(log.number(), ValuePointer.fileNumber(read.value(1)));
              assertArrayEquals(value(i, 500), reader.read(read.value(1)), "row " + i);
              pointers++;
            } else {
              assertEquals(RowState.ABSENT, read.kind(1));
            }
          }
        }
        Map<Long, Long> refs = m.properties().vlogRefs();
        assertEquals(
            pointers == 0 ? Map.of() : Map.of(log.number(), pointers),
            refs,
            "table " + m.number() + " counts its pointers into the log");
      }
    }
    assertEquals(n, i);
  }

  @Test
  void recordsExpiryAndOldestMergeWriteTimePerTable() {
    List<FileMeta> out;
    try (OutputWriter w = writer(0)) {
      RowState row = new RowState();
      // Enough rows for several tables: the first ones expire, the later ones never do.
      int i = 0;
      for (; i < 400; i++) {
        w.add(key(i), put(row, i, 40, 1_000 + i));
      }
      for (; i < 800; i++) {
        row.reset(LAYOUT);
        row.set(0, RowState.MERGE, value(i, 40), false, 0, 50_000 - i);
        w.add(key(i), row);
      }
      out = w.finish();
    }
    assertTrue(out.size() >= 3, "tables: " + out.size());
    Map<Long, long[]> expected = new HashMap<>();
    int i = 0;
    RowState read = new RowState();
    for (FileMeta m : out) {
      long maxExpiry = -1;
      long minMerge = Long.MAX_VALUE;
      boolean never = false;
      try (KvIterator it = m.table().iterator(0)) {
        for (it.seekToFirst(); it.valid(); it.next(), i++) {
          read.decode(LAYOUT, it.value());
          if (i < 400) {
            maxExpiry = Math.max(maxExpiry, 1_000 + i);
          } else {
            never = true;
            minMerge = Math.min(minMerge, 50_000 - i);
          }
        }
      }
      expected.put(m.number(), new long[] {never ? 0 : maxExpiry, minMerge});
    }
    for (FileMeta m : out) {
      long[] want = expected.get(m.number());
      assertEquals(want[0], m.properties().maxExpiry(), "max expiry of table " + m.number());
      assertEquals(want[1], m.properties().minMergeWriteTime(), "merge time of " + m.number());
    }
    assertTrue(out.get(0).properties().maxExpiry() >= 1_000, "the first table expires");
    assertEquals(0, out.get(out.size() - 1).properties().maxExpiry(), "never expires");
  }

  @Test
  void closingBeforeFinishLeavesNoPartialFileAndAbandonHandsBackCompletedTables() throws Exception {
    OutputWriter w = writer(100);
    RowState row = new RowState();
    // Separated values keep rows small: several tables complete, the last one stays partial.
    for (int i = 0; i < 1001; i++) {
      row.reset(LAYOUT);
      row.set(0, RowState.PUT, value(i, 300), false, 0, 0);
      w.add(key(i), row);
    }
    List<FileMeta> completed = w.abandon();
    assertTrue(completed.size() >= 2, "tables completed before the abandon: " + completed.size());
    List<String> left;
    try (Stream<Path> files = Files.list(dir)) {
      left = files.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
    }
    List<String> want = new ArrayList<>();
    completed.forEach(m -> want.add(versions.tablePath(m.number()).getFileName().toString()));
    want.sort(null);
    assertEquals(
        want, left, "only the completed tables remain; the partial table and log are gone");
  }

  /**
   * Encoded rows, stored as they are where they are plain and decoded otherwise, give the same
   * tables as decoded rows through {@link OutputWriter#add}: the same rows (large values separated
   * alike), table cuts, expiries and merge write times, with rows of no column skipped.
   */
  @Test
  void encodedRowsGiveTheTablesThatDecodedRowsGive() throws Exception {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    java.util.Random random = new java.util.Random(seed);
    List<byte[]> keys = new ArrayList<>();
    List<byte[]> rows = new ArrayList<>();
    RowState row = new RowState();
    for (int i = 0; i < 1500; i++) {
      row.reset(LAYOUT);
      for (int c = 0; c < LAYOUT.size(); c++) {
        int kind = random.nextInt(8);
        if (kind < 4) {
          row.set(
              c,
              RowState.PUT,
              value(i, 4 + random.nextInt(kind == 0 ? 400 : 60)),
              false,
              random.nextInt(3) * (1_000L + i),
              0);
        } else if (kind < 6) {
          row.set(c, RowState.DELETE, null, false, 0, 0);
        } else if (kind == 6) {
          row.set(c, RowState.MERGE, value(i, 8), false, 0, 90_000 - i);
        }
      }
      keys.add(key(i));
      rows.add(row.encode());
    }
    List<FileMeta> decodedOut;
    List<FileMeta> encodedOut;
    List<ValueLogFile> decodedLogs;
    List<ValueLogFile> encodedLogs;
    try (OutputWriter decodedWriter = writer(100);
        OutputWriter encodedWriter = writer(100)) {
      io.cobble.util.ByteReader reader = new io.cobble.util.ByteReader();
      RowState scratch = new RowState();
      for (int i = 0; i < rows.size(); i++) {
        row.decode(LAYOUT, rows.get(i));
        if (!row.isEmpty()) {
          decodedWriter.add(keys.get(i), row);
        }
        // Slices inside larger arrays, as a flush hands them over from the memtable's pages.
        byte[] k = keys.get(i);
        byte[] r = rows.get(i);
        encodedWriter.addEncoded(
            embedded(k, 3), 3, k.length, LAYOUT, embedded(r, 5), 5, r.length, scratch, reader);
      }
      decodedOut = decodedWriter.finish();
      encodedOut = encodedWriter.finish();
      decodedLogs = decodedWriter.vlogs();
      encodedLogs = encodedWriter.vlogs();
    }
    String seedNote = " (seed " + seed + ")";
    assertEquals(decodedOut.size(), encodedOut.size(), "tables" + seedNote);
    assertEquals(1, decodedLogs.size());
    assertEquals(1, encodedLogs.size());
    try (ValueLogReader decodedLog = logReader(decodedLogs.get(0));
        ValueLogReader encodedLog = logReader(encodedLogs.get(0))) {
      for (int f = 0; f < decodedOut.size(); f++) {
        FileMeta d = decodedOut.get(f);
        FileMeta e = encodedOut.get(f);
        assertEquals(d.properties().entries(), e.properties().entries(), "entries" + seedNote);
        assertEquals(d.properties().maxExpiry(), e.properties().maxExpiry(), "expiry" + seedNote);
        assertEquals(
            d.properties().minMergeWriteTime(),
            e.properties().minMergeWriteTime(),
            "merge time" + seedNote);
        assertEquals(
            d.properties().vlogRefs().values().stream().mapToLong(Long::longValue).sum(),
            e.properties().vlogRefs().values().stream().mapToLong(Long::longValue).sum(),
            "value-log references" + seedNote);
        try (KvIterator di = d.table().iterator(0);
            KvIterator ei = e.table().iterator(0)) {
          RowState dr = new RowState();
          RowState er = new RowState();
          for (di.seekToFirst(), ei.seekToFirst(); di.valid(); di.next(), ei.next()) {
            assertTrue(ei.valid(), seedNote);
            assertArrayEquals(di.key(), ei.key(), seedNote);
            dr.decode(LAYOUT, di.value());
            er.decode(LAYOUT, ei.value());
            for (int c = 0; c < LAYOUT.size(); c++) {
              String what = "column " + c + " of " + new String(di.key(), UTF_8) + seedNote;
              assertEquals(dr.kind(c), er.kind(c), what);
              assertEquals(dr.isPointer(c), er.isPointer(c), what);
              assertEquals(dr.expiry(c), er.expiry(c), what);
              if (dr.kind(c) == RowState.PUT || dr.kind(c) == RowState.MERGE) {
                assertArrayEquals(
                    dr.isPointer(c) ? decodedLog.read(dr.value(c)) : dr.value(c),
                    er.isPointer(c) ? encodedLog.read(er.value(c)) : er.value(c),
                    what);
              }
            }
          }
          assertFalse(ei.valid(), seedNote);
        }
      }
    }
  }

  private ValueLogReader logReader(ValueLogFile log) throws Exception {
    return new ValueLogReader(DataFile.local(versions.vlogPath(log.number())), log.size());
  }

  /** {@code b} at {@code off} in a larger array of other bytes. */
  private static byte[] embedded(byte[] b, int off) {
    byte[] out = new byte[off + b.length + 4];
    Arrays.fill(out, (byte) 0x5A);
    System.arraycopy(b, 0, out, off, b.length);
    return out;
  }
}
