package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Point reads racing writes, flushes and compactions on a shard built to make every window wide:
 * memtables of 4 KiB (a flush every few dozen writes), several sealed memtables at once, a block
 * cache of a few blocks (constant eviction and reuse of block arrays), values above the separation
 * threshold now and then, and three readers per writer. A read of a key after its writer was
 * acknowledged generation g must return g or newer, whole (both columns written in one batch agree)
 * and of that very key (each value names its writer and key); a key never written reads as absent.
 *
 * <p>Each memtable type runs for {@code cobble.stress.seconds} (default 2) and at least {@link
 * #MIN_WRITES} writes per writer; {@code -Dcobble.stress.seconds=300} hunts longer. The seed of the
 * key choices is printed and replayed with {@code cobble.stress.seed} (thread interleavings are not
 * replayable).
 */
class StaleReadStressTest {
  private static final int WRITERS = 2;
  private static final int READERS_PER_WRITER = 3;
  private static final int KEYS = 300;
  private static final int MIN_WRITES = 1_500;

  @TempDir Path dir;

  private static byte[] key(int writer, int k) {
    return String.format("w%d/key%05d", writer, k).getBytes(UTF_8);
  }

  /** Generation, writer and key number, then padding (long values go to the value log). */
  private static byte[] value(long gen, int writer, int k, int pad) {
    return ByteBuffer.allocate(16 + pad).putLong(gen).putInt(writer).putInt(k).array();
  }

  @ParameterizedTest
  @ValueSource(strings = {"hash", "adaptive", "skiplist", "vec"})
  void readsSeeAcknowledgedGenerationsOfTheirOwnKey(String memtable) throws Exception {
    long seed = Long.getLong("cobble.stress.seed", System.nanoTime());
    long seconds = Long.getLong("cobble.stress.seconds", 2);
    System.out.println(
        "StaleReadStressTest "
            + memtable
            + ": -Dcobble.stress.seed="
            + seed
            + ", "
            + seconds
            + " s");
    Config config =
        Config.builder()
            .set("memtable.type", memtable)
            .set("total-buckets", 2)
            .set("memtable.capacity", "4kb")
            .set("memory.memtable-buffer-count", 4)
            .set("sst.target-file-size", "8kb")
            .set("sst.block-size", "256b")
            .set("compaction.level-base-size", "32kb")
            .set("compaction.level-size-multiplier", 4)
            .set("compaction.threads", 2)
            .set("value-separation.threshold", "64")
            .set("block-cache.size", "2kb")
            .set("fsync.enabled", false)
            .build();
    AtomicLongArray acked = new AtomicLongArray(WRITERS * KEYS);
    AtomicBoolean done = new AtomicBoolean();
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    AtomicLong reads = new AtomicLong();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    try (Db db = Db.open(dir, config)) {
      db.createFamily("t", Arrays.asList(ColumnSpec.of("a"), ColumnSpec.of("b")));
      List<Thread> writers = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        writers.add(
            new Thread(
                () -> {
                  Random r = new Random(seed + writer);
                  for (long g = 1;
                      (g <= MIN_WRITES || System.nanoTime() < end) && errors.isEmpty();
                      g++) {
                    int k = r.nextInt(KEYS);
                    byte[] v = value(g, writer, k, r.nextInt(4) == 0 ? 80 : 0);
                    WriteBatch b = new WriteBatch();
                    b.put(writer % 2, "t", key(writer, k), 0, v);
                    b.put(writer % 2, "t", key(writer, k), 1, v);
                    db.write(b);
                    acked.set(writer * KEYS + k, g);
                  }
                }));
      }
      List<Thread> readers = new ArrayList<>();
      for (int rd = 0; rd < WRITERS * READERS_PER_WRITER; rd++) {
        int reader = rd;
        readers.add(
            new Thread(
                () -> {
                  Random r = new Random(seed + 100 + reader);
                  while (!done.get() && errors.isEmpty()) {
                    int writer = r.nextInt(WRITERS);
                    // One key in two was never written.
                    int k = r.nextInt(2 * KEYS);
                    long before = k < KEYS ? acked.get(writer * KEYS + k) : 0;
                    byte[][] row = db.get(writer % 2, "t", key(writer, k));
                    reads.incrementAndGet();
                    if (k >= KEYS) {
                      assertNull(row, "key " + k + " of writer " + writer + " was never written");
                      continue;
                    }
                    if (before == 0 && row == null) {
                      continue;
                    }
                    assertNotNull(
                        row, "acknowledged key " + k + " of writer " + writer + " missing");
                    assertArrayEquals(row[0], row[1], "torn row");
                    ByteBuffer v = ByteBuffer.wrap(row[0]);
                    long gen = v.getLong();
                    assertEquals(writer, v.getInt(), "row of another writer's key");
                    assertEquals(k, v.getInt(), "row of another key");
                    if (gen < before) {
                      throw new AssertionError(
                          "stale read of key "
                              + k
                              + " of writer "
                              + writer
                              + ": generation "
                              + gen
                              + " after "
                              + before
                              + " was acknowledged");
                    }
                  }
                }));
      }
      List<Thread> all = new ArrayList<>(writers);
      all.addAll(readers);
      for (Thread t : all) {
        t.setUncaughtExceptionHandler((th, e) -> errors.add(e));
        t.start();
      }
      long joinDeadline = end + TimeUnit.MINUTES.toNanos(5);
      for (Thread t : writers) {
        t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinDeadline - System.nanoTime())));
      }
      done.set(true);
      for (Thread t : readers) {
        t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinDeadline - System.nanoTime())));
      }
      for (Thread t : all) {
        assertTrue(!t.isAlive(), "a test thread did not finish within 5 minutes of the run's end");
      }
      if (!errors.isEmpty()) {
        throw new AssertionError("concurrent failure, seed " + seed, errors.peek());
      }
      db.waitForCompactions();
      for (int w = 0; w < WRITERS; w++) {
        for (int k = 0; k < KEYS; k++) {
          long g = acked.get(w * KEYS + k);
          byte[][] row = db.get(w % 2, "t", key(w, k));
          if (g > 0) {
            assertEquals(g, ByteBuffer.wrap(row[0]).getLong(), "final read of key " + k);
          }
        }
      }
      DbMetrics m = db.metrics();
      assertTrue(m.flushes() > 10 && m.compactions() > 0, m.toString());
      assertTrue(reads.get() > 0, "no read ran");
    }
  }
}
