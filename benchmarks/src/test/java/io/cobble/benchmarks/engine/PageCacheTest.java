package io.cobble.benchmarks.engine;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PageCache#load} reads every file of a store, nested ones included, and {@link
 * PageCache#evict} accepts the same tree. What the process read comes from {@code /proc/self/io}'s
 * {@code rchar} (bytes returned by read calls, page-cache hits included), so a load that skipped
 * files or read nothing would not reach the store's size.
 */
class PageCacheTest {
  @TempDir Path dir;

  @Test
  void loadReadsEveryFileOfTheStore() throws IOException {
    Random random = new Random(1);
    long total = 0;
    Path nested = Files.createDirectories(dir.resolve("a/b"));
    for (Path file :
        new Path[] {dir.resolve("000001.sst"), nested.resolve("000002.sst"), dir.resolve("x")}) {
      byte[] bytes = new byte[(3 << 20) + random.nextInt(1 << 20)];
      random.nextBytes(bytes);
      Files.write(file, bytes);
      total += bytes.length;
    }
    Files.createFile(dir.resolve("empty"));

    PageCache.evict(dir);
    long before = bytesRead();
    PageCache.load(dir);
    long read = bytesRead() - before;
    assertTrue(read >= total, "load read " + read + " bytes of a " + total + "-byte store");
  }

  private static long bytesRead() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/io"), StandardCharsets.US_ASCII)) {
      if (line.startsWith("rchar:")) {
        return Long.parseLong(line.substring("rchar:".length()).trim());
      }
    }
    throw new AssertionError("no rchar in /proc/self/io");
  }
}
