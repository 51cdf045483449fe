package io.cobble.compaction;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CorruptionException;
import io.cobble.FileDamage;
import io.cobble.cache.BlockCache;
import io.cobble.iterator.KvIterator;
import io.cobble.memtable.SkipListMemTable;
import io.cobble.merge.ListAppendOperator;
import io.cobble.merge.ListCodec;
import io.cobble.row.ColumnLayout;
import io.cobble.row.RowState;
import io.cobble.row.ValueLoader;
import io.cobble.schema.Column;
import io.cobble.schema.ColumnSpec;
import io.cobble.schema.FamilySchema;
import io.cobble.schema.Schema;
import io.cobble.sst.Table;
import io.cobble.sst.TableOptions;
import io.cobble.sst.TableReadOptions;
import io.cobble.storage.DataFile;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import io.cobble.version.VersionSet;
import io.cobble.vlog.ValueLogFile;
import io.cobble.vlog.ValueLogReader;
import io.cobble.vlog.ValuePointer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A compaction that stores the rows one source decides as it reads them (no decode, no encode)
 * writes what a compaction decoding and encoding every row writes, on real table and value-log
 * files: seeded random inputs (replay with {@code -Dcobble.test.seed}) of whole-row puts, partial
 * rows, deletes, merges, expiring values and values separated into a value log, merged in the
 * middle and at the bottom of the tree. A flipped byte in an input block is still reported.
 */
class CompactionPassThroughTest {
  private static final ColumnLayout MIXED =
      new ColumnLayout(
          new FamilySchema(
              0,
              "default",
              Arrays.asList(
                  new Column(0, ColumnSpec.of("a")),
                  new Column(1, ColumnSpec.of("b")),
                  new Column(2, ColumnSpec.merging("c", "concat"))),
              3),
          name -> null);

  /** List state's layout: one uncapped list column, folded by copying bytes. */
  private static final ColumnLayout LIST =
      new ColumnLayout(
          new FamilySchema(
              0,
              "default",
              Arrays.asList(new Column(0, ColumnSpec.merging("l", ListAppendOperator.NAME))),
              1),
          name -> null);

  private static final long SEPARATION = 100;
  private static final long DROP_BEFORE = 5_000;

  private ColumnLayout layout = MIXED;

  @TempDir Path dir;
  private VersionSet versions;
  private BlockCache cache;
  private final List<Table> opened = new ArrayList<>();
  private final Map<Long, ValueLogReader> logs = new HashMap<>();

  @BeforeEach
  void setUp() {
    versions = new VersionSet(dir, 16, 4, 1, 0, Schema.initial(), false);
    versions.initialize(
        new SkipListMemTable(1, (key, older, newer) -> newer),
        List.of(Tree.empty(4)),
        List.of(),
        Set.of(),
        Set.of());
    cache = new BlockCache(1 << 20);
  }

  @AfterEach
  void close() {
    opened.forEach(Table::close);
    logs.values().forEach(ValueLogReader::close);
    versions.close();
  }

  private OutputWriter writer() {
    TableOptions options =
        TableOptions.builder().blockSize(1024).restartInterval(8).bloomBitsPerKey(10).build();
    return new OutputWriter(
        versions,
        0,
        1,
        options,
        16 << 10,
        SEPARATION,
        (n, written) -> {
          Table t = Table.open(versions.tablePath(n), n, cache, TableReadOptions.UNPINNED);
          opened.add(t);
          return t;
        });
  }

  private final ValueLoader loader =
      pointer -> logs.get(ValuePointer.fileNumber(pointer)).read(pointer);

  private void register(List<ValueLogFile> files) {
    for (ValueLogFile f : files) {
      logs.put(
          f.number(), new ValueLogReader(DataFile.local(versions.vlogPath(f.number())), f.size()));
    }
  }

  private static byte[] key(int i) {
    byte[] k = new byte[8];
    k[1] = (byte) (i % 4);
    System.arraycopy(String.format("%06d", i).getBytes(UTF_8), 0, k, 2, 6);
    return k;
  }

  private static byte[] value(Random random, int length) {
    byte[] v = new byte[length];
    random.nextBytes(v);
    return v;
  }

  /** A random row: whole-row puts (the sink's rows) half of the time, else any mix of columns. */
  private RowState randomRow(Random random, RowState row) {
    if (layout == LIST) {
      return randomListRow(random, row);
    }
    row.reset(layout);
    boolean whole = random.nextBoolean();
    do {
      for (int c = 0; c < layout.size(); c++) {
        int kind = random.nextInt(whole ? 5 : 8);
        long expiry = random.nextInt(4) == 0 ? 1_000L + random.nextInt(9_000) : 0;
        if (kind < 4) {
          int length = random.nextInt(10) == 0 ? 150 : 1 + random.nextInt(40);
          row.set(c, RowState.PUT, value(random, length), false, expiry, 0);
        } else if (kind == 4) {
          row.set(c, RowState.DELETE, null, false, 0, 0);
        } else if (kind == 5 && c == 2) {
          row.set(c, RowState.MERGE, value(random, 6), false, expiry, random.nextInt(9_000));
        }
      }
    } while (row.isEmpty());
    return row;
  }

  /**
   * A random row of the list column: mostly a batch of appended elements, some puts (a few long
   * enough for the value log), deletes, and expiring values.
   */
  private static RowState randomListRow(Random random, RowState row) {
    row.reset(LIST);
    int kind = random.nextInt(10);
    long expiry = random.nextInt(4) == 0 ? 1_000L + random.nextInt(9_000) : 0;
    List<byte[]> elements = new ArrayList<>();
    int count = random.nextInt(10) == 0 ? 20 : 1 + random.nextInt(5);
    for (int i = 0; i < count; i++) {
      elements.add(value(random, 1 + random.nextInt(8)));
    }
    byte[] list = ListCodec.encode(elements);
    if (kind < 7) {
      row.set(0, RowState.MERGE, list, false, expiry, random.nextInt(9_000));
    } else if (kind < 9) {
      row.set(0, RowState.PUT, list, false, expiry, 0);
    } else {
      row.set(0, RowState.DELETE, null, false, 0, 0);
    }
    return row;
  }

  /** {@code files} tables of random rows over overlapping keys, newest first. */
  private List<FileMeta> inputs(Random random, int files, int keySpace) {
    List<FileMeta> tables = new ArrayList<>();
    RowState row = new RowState();
    for (int f = 0; f < files; f++) {
      TreeMap<Integer, Boolean> keys = new TreeMap<>();
      int n = keySpace / 3 + random.nextInt(keySpace / 2);
      for (int i = 0; i < n; i++) {
        keys.put(random.nextInt(keySpace), true);
      }
      try (OutputWriter w = writer()) {
        for (int k : keys.keySet()) {
          w.add(key(k), randomRow(random, row));
        }
        tables.addAll(w.finish());
        register(w.vlogs());
      }
    }
    // Written oldest first; a level-0 compaction takes its inputs newest first.
    java.util.Collections.reverse(tables);
    return tables;
  }

  private static final class Output {
    final List<FileMeta> tables;
    final long passedThrough;

    Output(List<FileMeta> tables, long passedThrough) {
      this.tables = tables;
      this.passedThrough = passedThrough;
    }
  }

  private Output compact(List<FileMeta> inputs, boolean bottom, boolean passThrough) {
    Compaction c =
        new Compaction(
            Compaction.Kind.MERGE, 0, 0, 1, inputs, List.of(), bottom, bottom ? DROP_BEFORE : 0);
    CompactionJob job = new CompactionJob(c, layout, loader, 0, file -> false);
    if (!passThrough) {
      job.decodeEveryRow();
    }
    try (OutputWriter out = writer()) {
      job.run(out);
      List<FileMeta> tables = out.finish();
      register(out.vlogs());
      return new Output(tables, job.rowsPassedThrough());
    }
  }

  private void assertSameContent(Output expected, Output actual, String note) {
    assertEquals(expected.tables.size(), actual.tables.size(), "tables" + note);
    RowState e = new RowState();
    RowState a = new RowState();
    for (int f = 0; f < expected.tables.size(); f++) {
      FileMeta ef = expected.tables.get(f);
      FileMeta af = actual.tables.get(f);
      assertEquals(ef.properties().entries(), af.properties().entries(), "entries" + note);
      assertEquals(ef.properties().maxExpiry(), af.properties().maxExpiry(), "expiry" + note);
      assertEquals(
          ef.properties().minMergeWriteTime(),
          af.properties().minMergeWriteTime(),
          "merge time" + note);
      assertArrayEquals(ef.properties().smallest(), af.properties().smallest(), note);
      assertArrayEquals(ef.properties().largest(), af.properties().largest(), note);
      try (KvIterator ei = ef.table().iterator(0);
          KvIterator ai = af.table().iterator(0)) {
        for (ei.seekToFirst(), ai.seekToFirst(); ei.valid(); ei.next(), ai.next()) {
          assertTrue(ai.valid(), note);
          assertArrayEquals(ei.key(), ai.key(), note);
          e.decode(layout, ei.value());
          a.decode(layout, ai.value());
          for (int c = 0; c < layout.size(); c++) {
            String what = "column " + c + " of key " + Arrays.toString(ei.key()) + note;
            assertEquals(e.kind(c), a.kind(c), what);
            assertEquals(e.expiry(c), a.expiry(c), what);
            assertEquals(e.writeTime(c), a.writeTime(c), what);
            if (e.kind(c) == RowState.PUT || e.kind(c) == RowState.MERGE) {
              assertArrayEquals(
                  e.isPointer(c) ? loader.load(e.value(c)) : e.value(c),
                  a.isPointer(c) ? loader.load(a.value(c)) : a.value(c),
                  what);
            }
          }
        }
        assertFalse(ai.valid(), note);
      }
    }
  }

  @Test
  void passingRowsThroughWritesWhatDecodingEveryRowWrites() {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    String note = " (seed " + seed + ")";
    Random random = new Random(seed);
    for (int round = 0; round < 4; round++) {
      List<FileMeta> inputs = inputs(random, 2 + random.nextInt(3), 400 + random.nextInt(400));
      for (boolean bottom : new boolean[] {false, true}) {
        String where = (bottom ? ", bottom" : ", middle") + ", round " + round + note;
        Output reference = compact(inputs, bottom, false);
        Output passed = compact(inputs, bottom, true);
        assertEquals(0, reference.passedThrough, where);
        assertTrue(passed.passedThrough > 0, "some rows passed through" + where);
        assertSameContent(reference, passed, where);
      }
    }
  }

  /**
   * Lists whose rows several sources hold are folded by copying their bytes (the newest row's
   * header, the older lists first), and a list merge at the bottom is stored as a put of the same
   * bytes: both write what decoding, folding and encoding every row writes, including where a
   * source holds a put in the value log (the fold then continues decoded), an expired value or a
   * delete under the merges.
   */
  @Test
  void foldingListsByteWiseWritesWhatDecodingEveryRowWrites() {
    layout = LIST;
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    String note = " (seed " + seed + ")";
    Random random = new Random(seed);
    for (int round = 0; round < 4; round++) {
      List<FileMeta> inputs = inputs(random, 2 + random.nextInt(4), 300 + random.nextInt(300));
      for (boolean bottom : new boolean[] {false, true}) {
        String where = (bottom ? ", bottom" : ", middle") + ", round " + round + note;
        Output reference = compact(inputs, bottom, false);
        Output folded = compact(inputs, bottom, true);
        assertEquals(0, reference.passedThrough, where);
        assertTrue(folded.passedThrough > 0, "some rows stored without decoding" + where);
        assertSameContent(reference, folded, where);
        assertSameBytes(reference, folded, where);
      }
    }
  }

  /** Both outputs hold the same encoded rows, byte for byte, but for value-log pointers. */
  private void assertSameBytes(Output expected, Output actual, String note) {
    RowState row = new RowState();
    for (int f = 0; f < expected.tables.size(); f++) {
      try (KvIterator ei = expected.tables.get(f).table().iterator(0);
          KvIterator ai = actual.tables.get(f).table().iterator(0)) {
        for (ei.seekToFirst(), ai.seekToFirst(); ei.valid(); ei.next(), ai.next()) {
          if (!row.decode(layout, ei.value()).isPointer(0)) {
            assertArrayEquals(ei.value(), ai.value(), "row of " + Arrays.toString(ei.key()) + note);
          }
        }
      }
    }
  }

  @Test
  void aFlippedByteInAnInputBlockIsReportedNotPassedThrough() throws Exception {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    Random random = new Random(seed);
    List<FileMeta> inputs = inputs(random, 2, 300);
    // A byte inside the first data block of the newest input: the rows there are passed through.
    FileDamage.flip(versions.tablePath(inputs.get(0).number()), 40);
    CorruptionException e =
        assertThrows(
            CorruptionException.class,
            () -> compact(inputs, false, true),
            "seed " + seed + ": the block checksum fails before any row is passed through");
    assertTrue(
        e.getMessage().contains(String.valueOf(inputs.get(0).number())),
        "names the damaged table: " + e.getMessage());
  }
}
