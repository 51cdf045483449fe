package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cobble.ChildJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Arena pages follow the collector: one G1 region less the array header's room (a humongous object
 * filling exactly one region) up to 4-MiB regions, 1 MiB otherwise. Each collector is checked in a
 * child JVM started with it, which also reads a vec memtable past the pages its index references
 * carry ({@link LargeArenaReadTest}), since the reference's bit split follows the page size.
 */
class ArenaPageSizeTest {
  private static final int MIB = 1 << 20;

  @Test
  void pagesFillOneG1RegionUpToFourMib() {
    assertEquals(MIB - 64, ArenaPageSize.of(true, MIB));
    assertEquals(2 * MIB - 64, ArenaPageSize.of(true, 2 * MIB));
    assertEquals(4 * MIB - 64, ArenaPageSize.of(true, 4 * MIB));
    assertEquals(4 * MIB - 64, ArenaPageSize.of(true, 32 * MIB));
  }

  @Test
  void otherCollectorsAndUnreadableRegionsKeepOneMib() {
    assertEquals(MIB, ArenaPageSize.of(false, 2 * MIB));
    assertEquals(MIB, ArenaPageSize.of(true, 0));
    assertEquals(MIB, ArenaPageSize.of(true, 3 * MIB));
  }

  @Test
  void eachCollectorsJvmPicksItsPagesAndReadsPastTheCarriedOnes() throws Exception {
    assertEquals(
        (MIB - 64) + " 127", child("-XX:+UseG1GC", "-XX:G1HeapRegionSize=1m"), "G1, 1-MiB regions");
    assertEquals(
        (2 * MIB - 64) + " 63", child("-XX:+UseG1GC", "-XX:G1HeapRegionSize=2m"), "G1, 2 MiB");
    assertEquals(
        (4 * MIB - 64) + " 31", child("-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m"), "G1, 4 MiB");
    assertEquals(
        (4 * MIB - 64) + " 31", child("-XX:+UseG1GC", "-XX:G1HeapRegionSize=32m"), "G1, 32 MiB");
    assertEquals(MIB + " 127", child("-XX:+UseParallelGC"), "parallel collector");
  }

  private static String child(String... collector) throws IOException, InterruptedException {
    List<String> options = new ArrayList<>(List.of(collector));
    options.add("-Xmx1g");
    Process p = ChildJvm.withOptions(options, Child.class).redirectErrorStream(true).start();
    try {
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new AssertionError("child with " + options + " failed:\n" + out);
      }
      return out;
    } finally {
      p.destroyForcibly();
    }
  }

  /** Prints the page size and carried pages, after the large-arena model test passes. */
  static final class Child {
    public static void main(String[] args) {
      new LargeArenaReadTest().keysPastTheCarriedPagesReadAsTheirFold();
      System.out.println(Arena.MAX_PAGE_SIZE + " " + RecordRef.CARRIED_PAGES);
    }
  }
}
