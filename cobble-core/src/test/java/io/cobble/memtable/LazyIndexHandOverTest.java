package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.util.ValueSink;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/**
 * The vec memtable builds its point-read index on the first get, while the writer keeps appending:
 * the first gets of two readers race a running writer on a fresh memtable, many rounds, and every
 * get is checked against a model of the key's deltas (kept here, not by the memtable). A get must
 * return the fold of a prefix of the key's writes that holds every write acknowledged before the
 * get started, and no prefix shorter than one that reader already saw. Keys have few bits so their
 * writes fold (a fifth of the writes replace the older ones), and the index starts small so it
 * grows during the hand-over. Runs {@code cobble.stress.seconds} (default 3); seeded, replay with
 * {@code -Dcobble.test.seed}.
 */
class LazyIndexHandOverTest {
  private static final int KEYS = 300;
  private static final int BEFORE_READS_MAX = 4_000;
  private static final int DURING_READS = 4_000;

  private static byte[] key(int k) {
    return new byte[] {'k', (byte) (k >>> 8), (byte) k};
  }

  /** The j-th delta of key k: the key's low byte and j, so a folded row spells its deltas. */
  private static byte[] delta(int k, int j) {
    return new byte[] {(byte) k, (byte) (j >>> 8), (byte) j};
  }

  private static boolean replaces(int k, int j) {
    return (k + j) % 5 == 0;
  }

  /** The model: the key's row after its first {@code p} writes (null for none). */
  private static byte[] model(int k, int p) {
    if (p == 0) {
      return null;
    }
    int from = 0;
    for (int j = p - 1; j > 0; j--) {
      if (replaces(k, j)) {
        from = j;
        break;
      }
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int j = from; j < p; j++) {
      out.writeBytes(delta(k, j));
    }
    return out.toByteArray();
  }

  /** The number of writes a row returned for key k folds (the last delta's j + 1), or 0. */
  private static int prefixOf(byte[] row) {
    if (row == null) {
      return 0;
    }
    assertTrue(row.length > 0 && row.length % 3 == 0, "torn row of " + row.length + " bytes");
    int last = row.length - 3;
    return (((row[last + 1] & 0xFF) << 8) | (row[last + 2] & 0xFF)) + 1;
  }

  /** Copies the row a sink get hands over. */
  private static final class Capture implements ValueSink {
    byte[] row;

    @Override
    public void accept(byte[] src, int off, int len) {
      row = Arrays.copyOfRange(src, off, off + len);
    }
  }

  @Test
  void firstGetsRacingPutsSeeEveryAcknowledgedWrite() throws Exception {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    long end =
        System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.getLong("cobble.stress.seconds", 3));
    Random random = new Random(seed);
    int rounds = 0;
    while (rounds < 20 || System.nanoTime() < end) {
      runRound(new Random(random.nextLong()), "round " + rounds + " (seed " + seed + ")");
      rounds++;
    }
  }

  private void runRound(Random random, String note) throws Exception {
    // Half the rounds publish the index after one pass, leaving the writer more to catch up on.
    VecMemTable m = new VecMemTable(1, TestMemTables.CONCAT, 0, random.nextBoolean() ? 0 : 4);
    AtomicIntegerArray acked = new AtomicIntegerArray(KEYS);
    int[] writes = new int[KEYS];
    int before = random.nextInt(BEFORE_READS_MAX);
    long writerSeed = random.nextLong();
    Random w = new Random(writerSeed);
    for (int i = 0; i < before; i++) {
      put(m, w.nextInt(KEYS), writes, acked);
    }
    CyclicBarrier start = new CyclicBarrier(3);
    AtomicBoolean done = new AtomicBoolean();
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    List<Thread> threads = new ArrayList<>();
    threads.add(
        new Thread(
            () -> {
              await(start);
              for (int i = 0; i < DURING_READS && errors.isEmpty(); i++) {
                put(m, w.nextInt(KEYS), writes, acked);
                // Pauses keep records the writer has not linked yet in view of the readers.
                if (w.nextInt(16) == 0) {
                  long until = System.nanoTime() + 2_000 + w.nextInt(8_000);
                  while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                  }
                }
              }
              done.set(true);
            }));
    for (int r = 0; r < 2; r++) {
      long readerSeed = random.nextLong();
      boolean sink = r == 1;
      threads.add(
          new Thread(
              () -> {
                Random rr = new Random(readerSeed);
                int[] seen = new int[KEYS];
                Capture capture = new Capture();
                await(start);
                do {
                  int k = rr.nextInt(KEYS);
                  int low = acked.get(k);
                  byte[] key = key(k);
                  byte[] row;
                  if (sink) {
                    capture.row = null;
                    row = m.get(key, key.length, capture) ? capture.row : null;
                  } else {
                    row = m.get(key, key.length);
                  }
                  int high = acked.get(k);
                  int p = prefixOf(row);
                  String what = "key " + k + ", " + note;
                  assertTrue(p >= low, "missed an acknowledged write of " + what);
                  assertTrue(p >= seen[k], "went back to an older row of " + what);
                  // The writer acknowledges a write after its put returns: one more may show.
                  assertTrue(p <= high + 1, "read a write not yet made of " + what);
                  assertArrayEquals(model(k, p), row, "wrong fold of " + what);
                  seen[k] = p;
                } while (!done.get() && errors.isEmpty());
              }));
    }
    for (Thread t : threads) {
      t.setUncaughtExceptionHandler((th, e) -> errors.add(e));
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    if (!errors.isEmpty()) {
      throw new AssertionError("hand-over failure, " + note, errors.peek());
    }
    assertTrue(m.indexed(), note);
    for (int k = 0; k < KEYS; k++) {
      byte[] key = key(k);
      assertArrayEquals(model(k, writes[k]), m.get(key, key.length), "key " + k + ", " + note);
    }
  }

  private static void put(VecMemTable m, int k, int[] writes, AtomicIntegerArray acked) {
    int j = writes[k]++;
    byte[] key = key(k);
    byte[] row = delta(k, j);
    m.put(key, key.length, row, row.length, replaces(k, j));
    acked.set(k, j + 1);
  }

  private static void await(CyclicBarrier barrier) {
    try {
      barrier.await();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** Puts alone, and the flush's sorted pass, never build the index a get would need. */
  @Test
  void writeOnlyMemTablesNeverBuildTheIndex() {
    VecMemTable m = new VecMemTable(1, TestMemTables.CONCAT, 1 << 16);
    int[] writes = new int[KEYS];
    AtomicIntegerArray acked = new AtomicIntegerArray(KEYS);
    Random random = new Random(7);
    for (int i = 0; i < 50_000; i++) {
      put(m, random.nextInt(KEYS), writes, acked);
    }
    long bytes = m.approximateBytes();
    m.seal();
    m.forEachRow((key, ko, kl, row, ro, rl) -> {});
    assertFalse(m.indexed());
    byte[] absent = key(KEYS);
    assertNull(m.get(absent, absent.length));
    assertTrue(m.indexed());
    assertTrue(m.approximateBytes() > bytes, "the built index counts in the memtable's size");
  }
}
