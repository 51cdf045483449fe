package io.cobble.read;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cobble.Config;
import io.cobble.SingleDb;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Readers that share a block cache far smaller than the data: every get decodes blocks into arrays
 * the cache recycles while other readers and a scanner use theirs. Each read must return exactly
 * the stored value; a block recycled while still pinned would return another key's bytes.
 */
class ConcurrentPointReadTest {
  private static final int KEYS = 30_000;

  @TempDir Path dir;

  private static byte[] key(int i) {
    return String.format("k%07d", i).getBytes();
  }

  private static byte[] value(int i) {
    byte[] v = new byte[40 + i % 80];
    new Random(i).nextBytes(v);
    return v;
  }

  @Test
  void getsAndScansSeeTheirOwnBlocks() throws Exception {
    Config config =
        Config.builder()
            .set("block-cache.size", 64 << 10)
            .set("sst.block-size", 4096)
            .set("sst.compression", "none,lz4")
            .build();
    try (SingleDb db = SingleDb.open(dir, config)) {
      for (int i = 0; i < KEYS; i++) {
        db.put(key(i), value(i));
      }
      db.flush();
      db.db().compactAll();
      db.db().waitForCompactions();
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
          long seed = t;
          work.add(
              pool.submit(
                  () -> {
                    Random r = new Random(seed);
                    for (int n = 0; n < 40_000; n++) {
                      int i = r.nextInt(KEYS);
                      assertArrayEquals(value(i), db.get(key(i)), "key " + i);
                    }
                  }));
        }
        work.add(
            pool.submit(
                () -> {
                  Random r = new Random(99);
                  for (int n = 0; n < 400; n++) {
                    int start = r.nextInt(KEYS - 100);
                    try (SingleDb.Cursor c = db.scan(key(start), key(start + 100))) {
                      int i = start;
                      while (c.hasNext()) {
                        Map.Entry<byte[], byte[]> e = c.next();
                        assertArrayEquals(key(i), e.getKey());
                        assertArrayEquals(value(i), e.getValue());
                        i++;
                      }
                      assertEquals(start + 100, i);
                    }
                  }
                }));
        for (Future<?> f : work) {
          f.get();
        }
      } finally {
        pool.shutdownNow();
      }
    }
  }
}
