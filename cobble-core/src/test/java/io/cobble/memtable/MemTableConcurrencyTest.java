package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.MemTableType;
import io.cobble.iterator.KvIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One writer and lock-free readers on one memtable. The writer inserts new keys (growing the index
 * arrays, the hash table and the arena's pages) and overwrites old ones with rows whose length and
 * every byte derive from a generation, so a reader that saw part of one record and part of another,
 * or a record before its bytes, fails the row check. Readers must also see at least the generation
 * acknowledged before their read started, and never a generation going backwards.
 */
class MemTableConcurrencyTest {
  private static final int KEYS = 20_000;
  private static final int WRITES = 200_000;

  /** Rows replace older ones, so a row is exactly the newest write. */
  private static final RowCombiner NEWEST = (key, older, newer) -> newer;

  private static byte[] key(int k) {
    return new byte[] {'k', (byte) (k >>> 16), (byte) (k >>> 8), (byte) k};
  }

  private static int keyNumber(byte[] key) {
    return ((key[1] & 0xFF) << 16) | ((key[2] & 0xFF) << 8) | (key[3] & 0xFF);
  }

  /** A row of {@code 8 + gen % 61} bytes: the generation, then its low byte repeated. */
  private static byte[] row(long gen) {
    byte[] r = new byte[8 + (int) (gen % 61)];
    for (int i = 0; i < 8; i++) {
      r[i] = (byte) (gen >>> (56 - 8 * i));
    }
    for (int i = 8; i < r.length; i++) {
      r[i] = (byte) gen;
    }
    return r;
  }

  /** The generation of a row, after checking the row is one whole record. */
  private static long checkedGen(byte[] r) {
    assertTrue(r.length >= 8, "torn row: " + r.length + " bytes");
    long gen = 0;
    for (int i = 0; i < 8; i++) {
      gen = (gen << 8) | (r[i] & 0xFF);
    }
    assertEquals(8 + gen % 61, r.length, "torn row: length does not match generation " + gen);
    for (int i = 8; i < r.length; i++) {
      assertEquals((byte) gen, r[i], "torn row: byte " + i + " of generation " + gen);
    }
    return gen;
  }

  private static MemTable create(MemTableType type) {
    switch (type) {
      case SKIPLIST:
        return new SkipListMemTable(1, NEWEST);
      case HASH:
        return new HashMemTable(1, NEWEST);
      case VEC:
        return new VecMemTable(1, NEWEST);
      default:
        return new AdaptiveMemTable(1, NEWEST, MemTableType.VEC);
    }
  }

  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void readersSeeWholeRowsAndAcknowledgedWrites(MemTableType type) throws Exception {
    MemTable m = create(type);
    AtomicLongArray acked = new AtomicLongArray(KEYS);
    AtomicBoolean done = new AtomicBoolean();
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    AtomicLong readerReads = new AtomicLong();
    // The vec type sorts everything appended on each read, so it gets a shorter run.
    int writes = type == MemTableType.VEC ? 2 * KEYS : WRITES;
    List<Thread> threads = new ArrayList<>();
    threads.add(
        new Thread(
            () -> {
              Random r = new Random(1);
              // Every 1/50 of the writes, wait for the reader to catch up by one read, so reads
              // interleave with writes however the threads get scheduled.
              int pause = writes / 50;
              for (long gen = 1; gen <= writes && errors.isEmpty(); gen++) {
                if (gen % pause == 0) {
                  while (readerReads.get() < gen / pause && errors.isEmpty()) {
                    Thread.onSpinWait();
                  }
                }
                int k = gen <= KEYS ? (int) gen - 1 : r.nextInt(KEYS);
                byte[] key = key(k);
                byte[] row = row(gen);
                m.put(key, key.length, row, row.length);
                acked.set(k, gen);
              }
            }));
    threads.add(
        new Thread(
            () -> {
              Random r = new Random(2);
              long[] seen = new long[KEYS];
              while (!done.get() && errors.isEmpty()) {
                int k = r.nextInt(KEYS);
                long before = acked.get(k);
                byte[] key = key(k);
                byte[] row = m.get(key, key.length);
                if (before > 0) {
                  assertNotNull(row, "acknowledged key " + k + " missing");
                }
                if (row != null) {
                  long gen = checkedGen(row);
                  assertTrue(gen >= before, "stale read of key " + k);
                  assertTrue(gen >= seen[k], "generation went backwards for key " + k);
                  seen[k] = gen;
                }
                readerReads.incrementAndGet();
              }
            }));
    if (type != MemTableType.VEC) {
      threads.add(
          new Thread(
              () -> {
                while (!done.get() && errors.isEmpty()) {
                  long[] before = new long[KEYS];
                  for (int k = 0; k < KEYS; k++) {
                    before[k] = acked.get(k);
                  }
                  KvIterator it = m.iterator();
                  int expect = 0;
                  for (it.seekToFirst(); it.valid(); it.next()) {
                    int k = keyNumber(it.key());
                    for (; expect < k; expect++) {
                      assertEquals(0, before[expect], "scan skipped acknowledged key " + expect);
                    }
                    expect = k + 1;
                    assertTrue(checkedGen(it.value()) >= before[k], "stale row in scan");
                  }
                }
              }));
    }
    for (Thread t : threads) {
      t.setUncaughtExceptionHandler((th, e) -> errors.add(e));
      t.start();
    }
    threads.get(0).join();
    done.set(true);
    for (Thread t : threads) {
      t.join();
    }
    if (!errors.isEmpty()) {
      throw new AssertionError("concurrent failure on " + type, errors.peek());
    }
    for (int k = 0; k < KEYS; k++) {
      byte[] key = key(k);
      assertEquals(acked.get(k), checkedGen(m.get(key, key.length)));
    }
    assertTrue(readerReads.get() >= 49, "reader did only " + readerReads.get() + " reads");
  }
}
