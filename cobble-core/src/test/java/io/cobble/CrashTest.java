package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a writing child JVM at random points (mid-flush, mid-compaction) and reopens the Db:
 * everything acknowledged as flushed must be there, nothing may read back wrong or corrupt.
 */
class CrashTest {
  private static final Config CONFIG =
      Config.builder()
          .set("memtable.capacity", "16kb")
          .set("sst.target-file-size", "16kb")
          .set("compaction.level-base-size", "64kb")
          .set("value-separation.threshold", "200")
          .build();

  @TempDir Path dir;

  static byte[] key(int i) {
    return String.format("key-%07d", i).getBytes(UTF_8);
  }

  static byte[] value(int i) {
    byte[] v = new byte[i % 4 == 0 ? 400 : 40];
    Arrays.fill(v, (byte) i);
    return v;
  }

  /** Child process: writes from a start index, reporting each completed flush on stdout. */
  public static void main(String[] args) {
    Path dir = Path.of(args[0]);
    int start = Integer.parseInt(args[1]);
    try (SingleDb db = SingleDb.open(dir, CONFIG)) {
      for (int i = start; ; i++) {
        db.put(key(i), value(i));
        if (i % 500 == 499) {
          db.flush();
          System.out.println("flushed " + (i + 1));
          System.out.flush();
        }
      }
    }
  }

  @Test
  void killedWriterLosesOnlyUnflushedData() throws Exception {
    Random rnd = new Random(11);
    int durable = 0;
    for (int round = 0; round < 4; round++) {
      Process p =
          ChildJvm.of(CrashTest.class, dir.toString(), String.valueOf(durable))
              .redirectErrorStream(true)
              .start();
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), UTF_8));
      int target = 2 + rnd.nextInt(4);
      int seen = 0;
      String line;
      while (seen < target && (line = out.readLine()) != null) {
        if (line.startsWith("flushed ")) {
          durable = Integer.parseInt(line.substring(8));
          seen++;
        }
      }
      assertTrue(seen == target, "child stopped early");
      Thread.sleep(rnd.nextInt(200));
      p.destroyForcibly();
      p.waitFor();
      try (SingleDb db = SingleDb.open(dir, CONFIG)) {
        for (int i = 0; i < durable; i++) {
          assertArrayEquals(value(i), db.get(key(i)), "flushed key " + i + " in round " + round);
        }
        for (int i = durable; i < durable + 3000; i++) {
          byte[] v = db.get(key(i));
          if (v != null) {
            assertArrayEquals(value(i), v, "unflushed key " + i);
          }
        }
      }
    }
    assertTrue(durable >= 8 * 500);
  }
}
