package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Writers, point readers and scanners share one Db while flushes and compactions run. Every row is
 * written with both columns equal in one batch, so a reader seeing them differ saw a torn row; a
 * reader must also see at least the generation acknowledged before its read started.
 */
class ConcurrencyTest {
  private static final int WRITERS = 2;
  private static final int KEYS = 400;
  private static final int WRITES_PER_WRITER = 15_000;

  @TempDir Path dir;

  private static byte[] key(int writer, int k) {
    return String.format("w%d/key%05d", writer, k).getBytes(UTF_8);
  }

  private static byte[] value(long gen, int pad) {
    byte[] v = new byte[8 + pad];
    for (int i = 0; i < 8; i++) {
      v[i] = (byte) (gen >>> (56 - 8 * i));
    }
    return v;
  }

  private static long gen(byte[] v) {
    long g = 0;
    for (int i = 0; i < 8; i++) {
      g = (g << 8) | (v[i] & 0xFF);
    }
    return g;
  }

  @ParameterizedTest
  @ValueSource(strings = {"adaptive", "skiplist", "hash", "vec"})
  void readersNeverSeeTornRowsOrLoseAcknowledgedWrites(String memtable) throws Exception {
    Config config =
        Config.builder()
            .set("memtable.type", memtable)
            .set("total-buckets", 2)
            .set("memtable.capacity", "32kb")
            .set("sst.target-file-size", "16kb")
            .set("compaction.level-base-size", "64kb")
            .set("compaction.level-size-multiplier", 4)
            .set("compaction.threads", 2)
            .set("sst.block-size", "1kb")
            .set("value-separation.threshold", "64")
            .set("block-cache.size", "256kb")
            .set("fsync.enabled", false)
            .build();
    AtomicLongArray acked = new AtomicLongArray(WRITERS * KEYS);
    AtomicBoolean done = new AtomicBoolean();
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    long[] readCount = new long[1];
    AtomicLong scanCount = new AtomicLong();
    try (Db db = Db.open(dir, config)) {
      db.createFamily("t", Arrays.asList(ColumnSpec.of("a"), ColumnSpec.of("b")));
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        threads.add(
            new Thread(
                () -> {
                  Random r = new Random(writer);
                  for (int i = 1; i <= WRITES_PER_WRITER && errors.isEmpty(); i++) {
                    int k = r.nextInt(KEYS);
                    long g = (long) i;
                    byte[] v = value(g, r.nextInt(4) == 0 ? 100 : 4);
                    WriteBatch b = new WriteBatch();
                    b.put(writer % 2, "t", key(writer, k), 0, v);
                    b.put(writer % 2, "t", key(writer, k), 1, v);
                    db.write(b);
                    acked.set(writer * KEYS + k, g);
                  }
                }));
      }
      for (int rd = 0; rd < 2; rd++) {
        int seed = rd;
        threads.add(
            new Thread(
                () -> {
                  Random r = new Random(100 + seed);
                  while (!done.get() && errors.isEmpty()) {
                    int writer = r.nextInt(WRITERS);
                    int k = r.nextInt(KEYS);
                    long before = acked.get(writer * KEYS + k);
                    byte[][] row = db.get(writer % 2, "t", key(writer, k));
                    if (before > 0) {
                      assertNotNull(row, "acknowledged key missing");
                      assertArrayEquals(row[0], row[1], "torn row");
                      assertTrue(gen(row[0]) >= before, "stale read");
                    }
                    synchronized (readCount) {
                      readCount[0]++;
                    }
                  }
                }));
      }
      threads.add(
          new Thread(
              () -> {
                Random r = new Random(7);
                while (!done.get() && errors.isEmpty()) {
                  int writer = r.nextInt(WRITERS);
                  long[] before = new long[KEYS];
                  for (int k = 0; k < KEYS; k++) {
                    before[k] = acked.get(writer * KEYS + k);
                  }
                  int seen = 0;
                  try (ScanCursor c =
                      db.scan(
                          writer % 2,
                          "t",
                          key(writer, 0),
                          key(writer, KEYS),
                          ScanOptions.DEFAULT)) {
                    int expectNext = 0;
                    while (c.hasNext()) {
                      Row row = c.next();
                      int k = Integer.parseInt(new String(row.key(), UTF_8).substring(6));
                      for (; expectNext < k; expectNext++) {
                        assertEquals(0, before[expectNext], "scan skipped acknowledged key");
                      }
                      expectNext = k + 1;
                      assertArrayEquals(row.column(0), row.column(1), "torn row in scan");
                      assertTrue(gen(row.column(0)) >= before[k], "stale row in scan");
                      seen++;
                    }
                    for (; expectNext < KEYS; expectNext++) {
                      assertEquals(
                          0,
                          before[expectNext],
                          "scan ended before acknowledged key " + expectNext);
                    }
                  }
                  int acknowledged = 0;
                  for (long g : before) {
                    acknowledged += g > 0 ? 1 : 0;
                  }
                  assertTrue(
                      seen >= acknowledged,
                      "scan returned " + seen + " rows, " + acknowledged + " were acknowledged");
                  scanCount.incrementAndGet();
                }
              }));
      threads.add(
          new Thread(
              () -> {
                while (!done.get() && errors.isEmpty()) {
                  db.flush();
                  try {
                    Thread.sleep(20);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              }));
      for (Thread t : threads) {
        t.setUncaughtExceptionHandler((th, e) -> errors.add(e));
        t.start();
      }
      for (int w = 0; w < WRITERS; w++) {
        threads.get(w).join();
      }
      done.set(true);
      for (Thread t : threads) {
        t.join();
      }
      if (!errors.isEmpty()) {
        AssertionError failure = new AssertionError("concurrent failure", errors.peek());
        throw failure;
      }
      db.waitForCompactions();
      for (int w = 0; w < WRITERS; w++) {
        for (int k = 0; k < KEYS; k++) {
          long g = acked.get(w * KEYS + k);
          byte[][] row = db.get(w % 2, "t", key(w, k));
          if (g > 0) {
            assertEquals(g, gen(row[0]));
          }
        }
      }
      DbMetrics m = db.metrics();
      assertTrue(m.flushes() > 10 && m.compactions() > 2, m.toString());
      assertTrue(readCount[0] > 1000, "reads " + readCount[0]);
      assertTrue(scanCount.get() > 0, "no scan completed while writers ran");
    }
  }
}
