package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import java.nio.file.Path;
import java.util.Collections;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An adaptive memtable converts to a skiplist on the first scan, on the scanning thread, while the
 * Db's writer keeps putting without a lock of the memtable's own: the conversion must exclude puts
 * through the shard mutex the writer holds, or a put into the index being replaced is lost. Scans
 * are paced to stay under 1 % of the operations, so every memtable starts as vec and its first scan
 * converts it while puts run.
 */
class AdaptiveConversionRaceTest {
  // Every key is written once, so a put lost to a conversion is missing at the end.
  private static final int WRITES = 150_000;
  private static final int WRITES_PER_SCAN = 1_500;

  @TempDir Path dir;

  private static byte[] key(int k) {
    return String.format("key%06d", k).getBytes(UTF_8);
  }

  private static byte[] value(long gen) {
    byte[] v = new byte[8];
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

  @Test
  void conversionsRacingPutsLoseNoAcknowledgedWrite() throws Exception {
    Config config =
        Config.builder()
            .set("memtable.type", "adaptive")
            .set("memtable.capacity", "256kb")
            .set("fsync.enabled", false)
            .build();
    AtomicLong written = new AtomicLong();
    AtomicBoolean done = new AtomicBoolean();
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    AtomicLong scans = new AtomicLong();
    try (Db db = Db.open(dir, config)) {
      db.createFamily("t", Collections.singletonList(ColumnSpec.of("v")));
      Thread writer =
          new Thread(
              () -> {
                for (int i = 1; i <= WRITES && errors.isEmpty(); i++) {
                  db.put(0, "t", key(i), 0, value(i));
                  written.set(i);
                }
              });
      Thread scanner =
          new Thread(
              () -> {
                long next = WRITES_PER_SCAN;
                while (!done.get() && errors.isEmpty()) {
                  if (written.get() < next) {
                    Thread.onSpinWait();
                    continue;
                  }
                  next = written.get() + WRITES_PER_SCAN;
                  // Only the first rows: the scan is here to convert the memtable.
                  try (ScanCursor c = db.scan(0, "t", key(1), key(10), ScanOptions.DEFAULT)) {
                    while (c.hasNext()) {
                      c.next();
                    }
                  }
                  scans.incrementAndGet();
                }
              });
      for (Thread t : new Thread[] {writer, scanner}) {
        t.setUncaughtExceptionHandler((th, e) -> errors.add(e));
        t.start();
      }
      writer.join();
      done.set(true);
      scanner.join();
      if (!errors.isEmpty()) {
        throw new AssertionError("concurrent failure", errors.peek());
      }
      assertTrue(scans.get() > 10, "only " + scans.get() + " scans ran beside the writer");
      for (int i = 1; i <= WRITES; i++) {
        byte[][] row = db.get(0, "t", key(i));
        assertEquals(i, row == null ? 0 : gen(row[0]), "key " + i);
      }
    }
  }
}
