package io.cobble.memtable;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.MemTableType;
import io.cobble.iterator.KvIterator;
import io.cobble.util.Bytes;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every memtable type gives an iterator the rows as they were when it was created: later new keys,
 * overwrites and folds never show in it, also when the adaptive memtable changes its index while
 * the iterator is open. The random test's seed is printed; replay one with {@code
 * -Dcobble.cursor.seed=<seed>}.
 */
class SnapshotCursorTest {
  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  private static void put(MemTable m, String key, String row) {
    byte[] k = bytes(key);
    byte[] r = bytes(row);
    m.put(k, k.length, r, r.length);
  }

  /** An iterator the way a scan opens it (the adaptive memtable converts to a skiplist first). */
  private static KvIterator scanIterator(MemTable m) {
    return m instanceof AdaptiveMemTable ? ((AdaptiveMemTable) m).scanIterator() : m.iterator();
  }

  private static String rest(KvIterator it) {
    StringBuilder out = new StringBuilder();
    for (; it.valid(); it.next()) {
      out.append(' ').append(new String(it.key(), UTF_8)).append('=');
      out.append(new String(it.value(), UTF_8));
    }
    return out.toString().trim();
  }

  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void writesAfterTheIteratorOpenedDoNotShow(MemTableType type) {
    MemTable m = TestMemTables.create(type);
    put(m, "a", "1");
    put(m, "c", "1");
    put(m, "e", "1");
    put(m, "g", "1");
    KvIterator it = scanIterator(m);
    it.seekToFirst();
    assertEquals("a", new String(it.key(), UTF_8));
    it.next();
    put(m, "f", "new");
    put(m, "g", "2");
    put(m, "e", "x");
    put(m, "b", "new");
    assertEquals("c=1 e=1 g=1", rest(it));
    KvIterator later = scanIterator(m);
    later.seekToFirst();
    assertEquals("a=1 b=new c=1 e=1x f=new g=12", rest(later));
    KvIterator sought = scanIterator(m);
    put(m, "d", "new");
    sought.seek(bytes("d"));
    assertEquals("e=1x f=new g=12", rest(sought));
  }

  /**
   * Random writes with iterators opened, advanced and re-sought at random moments, each checked
   * against a copy of the model taken when it opened. On the adaptive memtable gets and scans
   * convert the index while older iterators are still reading the old one.
   */
  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void randomWritesMatchTheModelAsOfEachIteratorsCreation(MemTableType type) {
    long seed = Long.getLong("cobble.cursor.seed", System.nanoTime());
    System.out.println("SnapshotCursorTest " + type + " seed " + seed);
    try {
      randomRun(type, new Random(seed));
    } catch (AssertionError e) {
      throw new AssertionError(
          type + " seed " + seed + " (replay: -Dcobble.cursor.seed=" + seed + "): " + e, e);
    }
  }

  private static void randomRun(MemTableType type, Random rnd) {
    for (int round = 0; round < 20; round++) {
      MemTable m = TestMemTables.create(type);
      TreeMap<byte[], byte[]> model = new TreeMap<>(Bytes::compare);
      List<Open> open = new ArrayList<>();
      int keys = 1 + rnd.nextInt(rnd.nextBoolean() ? 20 : 2000);
      for (int op = 0; op < 3000; op++) {
        int dice = rnd.nextInt(100);
        if (dice < 60) {
          byte[] k = bytes("k" + rnd.nextInt(keys));
          byte[] v = bytes(Integer.toString(op, 36) + ";");
          boolean replaces = rnd.nextInt(4) == 0;
          m.put(k, k.length, v, v.length, replaces);
          model.merge(
              k,
              v,
              (older, newer) -> replaces ? newer : TestMemTables.CONCAT.combine(k, older, newer));
        } else if (dice < 70) {
          boolean scan = rnd.nextBoolean();
          KvIterator it = scan ? scanIterator(m) : m.iterator();
          it.seekToFirst();
          open.add(new Open(it, new TreeMap<>(model)));
        } else if (dice < 93 && !open.isEmpty()) {
          Open o = open.get(rnd.nextInt(open.size()));
          for (int n = rnd.nextInt(50); n > 0 && o.it.valid(); n--) {
            o.check();
            o.it.next();
          }
          if (!o.it.valid()) {
            assertFalse(o.expected.hasNext(), "iterator ended early");
            open.remove(o);
          }
        } else if (dice < 96 && !open.isEmpty()) {
          Open o = open.get(rnd.nextInt(open.size()));
          o.seek(bytes("k" + rnd.nextInt(keys)));
        } else {
          byte[] k = bytes("k" + rnd.nextInt(keys));
          byte[] got = m.get(k, k.length);
          byte[] want = model.get(k);
          assertEquals(want == null, got == null, "get " + new String(k, UTF_8));
          if (want != null) {
            assertArrayEquals(want, got, "get " + new String(k, UTF_8));
          }
        }
      }
      for (Open o : open) {
        o.checkRest();
      }
    }
  }

  /** An open iterator and what it must still return. */
  private static final class Open {
    final KvIterator it;
    final TreeMap<byte[], byte[]> snapshot;
    Iterator<Map.Entry<byte[], byte[]>> expected;

    Open(KvIterator it, TreeMap<byte[], byte[]> snapshot) {
      this.it = it;
      this.snapshot = snapshot;
      this.expected = snapshot.entrySet().iterator();
    }

    void check() {
      assertTrue(expected.hasNext(), "row beyond the snapshot: " + new String(it.key(), UTF_8));
      Map.Entry<byte[], byte[]> e = expected.next();
      assertEquals(new String(e.getKey(), UTF_8), new String(it.key(), UTF_8));
      assertEquals(new String(e.getValue(), UTF_8), new String(it.value(), UTF_8));
    }

    void seek(byte[] target) {
      it.seek(target);
      expected = snapshot.tailMap(target, true).entrySet().iterator();
    }

    void checkRest() {
      for (; it.valid(); it.next()) {
        check();
      }
      assertFalse(expected.hasNext(), "iterator ended early");
    }
  }

  /**
   * A writer rewrites every key in key order, round after round, while iterators open and read
   * slowly. The memtable at any moment holds a prefix of that sequence: rounds along the keys never
   * rise and drop by at most one. An iterator that showed writes made after it opened would see a
   * later round further on.
   */
  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void iteratorsNextToAWriterReadOneMoment(MemTableType type) throws Exception {
    MemTable m = TestMemTables.create(type);
    int keys = 2000;
    for (int k = 0; k < keys; k++) {
      write(m, k, 0);
    }
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread writer =
        new Thread(
            () -> {
              try {
                for (int round = 1; round <= 500 && !stop.get(); round++) {
                  for (int k = 0; k < keys; k++) {
                    write(m, k, round);
                  }
                }
              } catch (Throwable t) {
                failure.set(t);
              }
            });
    writer.start();
    try {
      for (int scan = 0; scan < 100; scan++) {
        KvIterator it = scanIterator(m);
        int first = -1;
        int previous = -1;
        int count = 0;
        for (it.seekToFirst(); it.valid(); it.next()) {
          int round = Bytes.getInt(it.value(), 0);
          if (first < 0) {
            first = round;
          }
          assertTrue(
              round <= first && round >= first - 1 && (previous < 0 || round <= previous),
              "key " + count + " of scan " + scan + ": round " + round + " after " + previous);
          previous = round;
          count++;
          if (count % 256 == 0) {
            Thread.yield();
          }
        }
        assertEquals(keys, count);
      }
    } finally {
      stop.set(true);
      writer.join();
    }
    if (failure.get() != null) {
      throw new AssertionError("writer failed", failure.get());
    }
  }

  /**
   * A writer updates the first and the last key the memtable holds, in turn, while iterators open:
   * at any moment the last key's round is the first key's or one less. The keys lie far apart in
   * the memtable (many keys came between them), so an iterator that copied its rows one by one
   * instead of as of one moment would find the last key a round or more ahead.
   */
  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void rowsFarApartAreReadAsOfOneMoment(MemTableType type) throws Exception {
    MemTable m = TestMemTables.create(type);
    byte[] first = bytes("a");
    byte[] last = bytes("z");
    byte[] row = new byte[4];
    m.put(first, first.length, row, row.length, true);
    for (int k = 0; k < 100_000; k++) {
      byte[] key = bytes("m" + k);
      m.put(key, key.length, row, row.length, true);
    }
    m.put(last, last.length, row, row.length, true);
    AtomicBoolean stop = new AtomicBoolean();
    Thread writer =
        new Thread(
            () -> {
              byte[] r = new byte[4];
              for (int round = 1; round <= 300_000 && !stop.get(); round++) {
                Bytes.putInt(r, 0, round);
                m.put(first, first.length, r, r.length, true);
                m.put(last, last.length, r, r.length, true);
              }
            });
    writer.start();
    try {
      for (int scan = 0; scan < 20; scan++) {
        KvIterator it = scanIterator(m);
        it.seek(first);
        int a = Bytes.getInt(it.value(), 0);
        it.seek(last);
        int z = Bytes.getInt(it.value(), 0);
        assertTrue(z == a || z == a - 1, "scan " + scan + ": a at round " + a + ", z at " + z);
      }
    } finally {
      stop.set(true);
      writer.join();
    }
  }

  private static void write(MemTable m, int k, int round) {
    byte[] key = {'k', (byte) (k >>> 8), (byte) k};
    byte[] row = new byte[4];
    Bytes.putInt(row, 0, round);
    m.put(key, key.length, row, row.length, true);
  }
}
