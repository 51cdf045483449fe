package io.cobble.read;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.SingleDb;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Point readers on memory-mapped tables (the default) while flushes and compactions replace and
 * delete the files they read: every get returns the latest value written before it started or a
 * later one, and once compactions have settled no mapping of a deleted table remains in the process
 * ({@code /proc/self/maps}); after close no mapping of the directory remains at all. A mapping
 * never released would stay listed as "(deleted)". Seeded: {@code -Dcobble.mapped-lifetime.seed=N}
 * replays a run.
 */
class MappedTableLifetimeTest {
  private static final long SEED = Long.getLong("cobble.mapped-lifetime.seed", System.nanoTime());
  private static final int KEYS = 4000;

  @TempDir Path dir;

  private static byte[] key(int i) {
    return String.format("k%06d", i).getBytes();
  }

  /** Values carry the key and a version, so a reader can tell an older or foreign value. */
  private static byte[] value(int i, long version) {
    return String.format("%06d:%012d:%s", i, version, "v".repeat(i % 60)).getBytes();
  }

  @Test
  void readersSeeTheirDataAndDeletedTablesAreUnmapped() throws Exception {
    String msg = "seed " + SEED + " (-Dcobble.mapped-lifetime.seed)";
    Config config =
        Config.builder()
            .set("memtable.capacity", "64kb")
            .set("sst.target-file-size", "32kb")
            .set("sst.block-size", "1kb")
            .set("block-cache.size", "32kb")
            .set("compaction.level-base-size", "64kb")
            .build();
    // The newest version each key was written with and completed.
    long[] written = new long[KEYS];
    ConcurrentHashMap<Integer, Long> done = new ConcurrentHashMap<>();
    try (SingleDb db = SingleDb.open(dir, config)) {
      for (int i = 0; i < KEYS; i++) {
        db.put(key(i), value(i, 0));
        done.put(i, 0L);
      }
      db.flush();
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong reads = new AtomicLong();
      ExecutorService pool = Executors.newFixedThreadPool(2);
      try {
        List<Future<?>> readers = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
          long seed = SEED + t;
          readers.add(
              pool.submit(
                  () -> {
                    Random r = new Random(seed);
                    while (!stop.get()) {
                      int i = r.nextInt(KEYS);
                      long atLeast = done.get(i);
                      byte[] v = db.get(key(i));
                      String s = new String(v);
                      long version = Long.parseLong(s.substring(7, 19));
                      assertArrayEquals(value(i, version), v, msg + " key " + i);
                      assertTrue(version >= atLeast, msg + " key " + i + " read an older value");
                      reads.incrementAndGet();
                    }
                    return null;
                  }));
        }
        Random r = new Random(SEED);
        for (long version = 1; version <= 6; version++) {
          for (int n = 0; n < KEYS; n++) {
            int i = r.nextInt(KEYS);
            db.put(key(i), value(i, version));
            written[i] = version;
            done.put(i, version);
          }
          db.flush();
          if (version % 2 == 0) {
            db.db().compactAll();
          }
        }
        db.db().waitForCompactions();
        stop.set(true);
        for (Future<?> f : readers) {
          f.get(120, TimeUnit.SECONDS);
        }
        assertTrue(reads.get() > 0, msg);
      } finally {
        stop.set(true);
        pool.shutdownNow();
      }
      for (int i = 0; i < KEYS; i++) {
        assertArrayEquals(value(i, written[i]), db.get(key(i)), msg + " key " + i);
      }
      assertTrue(!mappedTables().isEmpty(), "live tables are read through mappings");
      waitUntilNone(this::deletedMappings, msg + ": mappings of deleted tables");
    }
    waitUntilNone(this::mappedTables, msg + ": mappings left after close");
  }

  private interface Lines {
    List<String> get() throws IOException;
  }

  /** Deleted tables are unmapped by the deleter thread once the last version left them. */
  private static void waitUntilNone(Lines lines, String what) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!lines.get().isEmpty()) {
      if (System.nanoTime() > deadline) {
        assertEquals(List.of(), lines.get(), what + " after 60 s");
      }
      Thread.sleep(20);
    }
  }

  private List<String> mappedTables() throws IOException {
    String prefix = dir.toRealPath().toString();
    return Files.readAllLines(Paths.get("/proc/self/maps")).stream()
        .filter(l -> l.contains(prefix) && l.contains(".sst"))
        .collect(Collectors.toList());
  }

  private List<String> deletedMappings() throws IOException {
    return mappedTables().stream()
        .filter(l -> l.endsWith("(deleted)"))
        .collect(Collectors.toList());
  }
}
