package io.cobble.read;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Clock;
import io.cobble.Config;
import io.cobble.Db;
import io.cobble.ReadOptions;
import io.cobble.schema.ColumnSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Point reads read the clock only for rows whose values expire: reading it costs tens of ns per get
 * on VMs (the keyed state backend writes no engine expiry), while rows with an expiry still expire
 * at the clock's time.
 */
class PointReadClockTest {
  private static final String FAMILY = "f";

  @TempDir Path dir;

  /** Counts the reads of the thread that created it only, so background work does not count. */
  private static final class CountingClock implements Clock {
    private final Thread reader = Thread.currentThread();
    private final AtomicLong now = new AtomicLong(1_000_000);
    private long readerReads;

    @Override
    public long nowMillis() {
      if (Thread.currentThread() == reader) {
        readerReads++;
      }
      return now.get();
    }
  }

  @Test
  void getsOfRowsWithoutExpiryDoNotReadTheClock() {
    CountingClock clock = new CountingClock();
    try (Db db = Db.open(dir, Config.builder().clock(clock).build())) {
      db.createFamily(FAMILY, List.of(ColumnSpec.of("a"), ColumnSpec.merging("b", "concat")));
      for (int k = 0; k < 100; k++) {
        db.put(0, FAMILY, key(k), 0, bytes("v" + k));
        db.merge(0, FAMILY, key(k), 1, bytes("m" + k));
      }
      db.flush();
      for (int k = 50; k < 100; k++) {
        db.put(0, FAMILY, key(k), 0, bytes("w" + k));
      }
      clock.readerReads = 0;
      for (int k = 0; k < 120; k++) {
        byte[] a = db.getColumn(0, FAMILY, key(k), 0);
        byte[][] row = db.get(0, FAMILY, key(k));
        byte[][] projected = db.get(0, FAMILY, key(k), ReadOptions.columns(1));
        if (k < 100) {
          assertArrayEquals(bytes((k < 50 ? "v" : "w") + k), a);
          assertArrayEquals(a, row[0]);
          assertArrayEquals(bytes("m" + k), projected[0]);
        } else {
          assertNull(a);
          assertNull(row);
        }
      }
      assertEquals(
          2, db.multiGet(0, FAMILY, Arrays.asList(key(3), key(77)), ReadOptions.columns(0)).size());
      assertEquals(0, clock.readerReads, "clock reads by 362 gets of rows without expiry");
    }
  }

  @Test
  void getsOfRowsWithExpiryReadTheClockAndExpire() {
    CountingClock clock = new CountingClock();
    try (Db db = Db.open(dir, Config.builder().clock(clock).build())) {
      db.createFamily(FAMILY, List.of(ColumnSpec.of("a"), ColumnSpec.of("b")));
      db.put(0, FAMILY, key(1), 0, bytes("short"), 100);
      db.put(0, FAMILY, key(1), 1, bytes("forever"));
      db.put(0, FAMILY, key(2), 0, bytes("short"), 100);
      db.flush();
      clock.readerReads = 0;
      assertArrayEquals(bytes("short"), db.getColumn(0, FAMILY, key(1), 0));
      assertTrue(clock.readerReads > 0, "a get of a value with an expiry reads the clock");
      clock.now.addAndGet(100);
      assertNull(db.getColumn(0, FAMILY, key(1), 0));
      assertNull(db.getColumn(0, FAMILY, key(2), 0));
      assertNull(db.get(0, FAMILY, key(2)));
      byte[][] row = db.get(0, FAMILY, key(1));
      assertNull(row[0]);
      assertArrayEquals(bytes("forever"), row[1]);
      assertArrayEquals(bytes("forever"), db.getColumn(0, FAMILY, key(1), 1));
    }
  }

  /**
   * {@link Db#isEmpty} reads the clock only when a row it looks at expires: not for puts decided by
   * the newest source, nor for ranges decided by the full merge (a newer tombstone over a put).
   */
  @Test
  void emptinessProbesOfRowsWithoutExpiryDoNotReadTheClock() {
    CountingClock clock = new CountingClock();
    try (Db db = Db.open(dir, Config.builder().clock(clock).build())) {
      db.createFamily(FAMILY, List.of(ColumnSpec.of("a"), ColumnSpec.merging("b", "concat")));
      for (int k = 0; k < 30; k++) {
        db.put(0, FAMILY, key(k), 0, bytes("v" + k));
      }
      db.flush();
      for (int k = 10; k < 20; k++) {
        db.deleteRow(0, FAMILY, key(k));
      }
      db.merge(0, FAMILY, key(25), 1, bytes("m"));
      clock.readerReads = 0;
      for (int k = 0; k < 40; k++) {
        byte[] lo = key(k);
        byte[] hi = Arrays.copyOf(lo, lo.length + 1);
        boolean live = k < 10 || (k >= 20 && k < 30);
        assertEquals(!live, db.isEmpty(0, FAMILY, lo, hi), "key " + k);
      }
      assertEquals(0, clock.readerReads, "clock reads by 40 probes of rows without expiry");
    }
  }

  @Test
  void emptinessProbesOfRowsWithExpiryReadTheClockAndExpire() {
    CountingClock clock = new CountingClock();
    try (Db db = Db.open(dir, Config.builder().clock(clock).build())) {
      db.createFamily(FAMILY, List.of(ColumnSpec.of("a")));
      db.put(0, FAMILY, key(1), 0, bytes("short"), 100);
      db.flush();
      db.put(0, FAMILY, key(2), 0, bytes("short"), 100);
      byte[] lo1 = key(1);
      byte[] lo2 = key(2);
      clock.readerReads = 0;
      assertFalse(db.isEmpty(0, FAMILY, lo1, Arrays.copyOf(lo1, lo1.length + 1)));
      assertFalse(db.isEmpty(0, FAMILY, lo2, Arrays.copyOf(lo2, lo2.length + 1)));
      assertTrue(clock.readerReads > 0, "a probe of a value with an expiry reads the clock");
      clock.now.addAndGet(100);
      assertTrue(db.isEmpty(0, FAMILY, lo1, Arrays.copyOf(lo1, lo1.length + 1)));
      assertTrue(db.isEmpty(0, FAMILY, lo2, Arrays.copyOf(lo2, lo2.length + 1)));
      assertTrue(db.isEmpty(0, FAMILY, null, null));
    }
  }

  private static byte[] key(int k) {
    return bytes("key" + k);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
