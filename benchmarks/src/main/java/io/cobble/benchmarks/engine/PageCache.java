package io.cobble.benchmarks.engine;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * Drops one store's files from the kernel page cache, so the next reads of those files come from
 * the disk: how compaction inputs look once they have aged out of memory; or reads them all once,
 * so both engines of a paired run start with their files equally resident. Uses GNU {@code dd
 * iflag=nocache count=0}, which issues {@code posix_fadvise(POSIX_FADV_DONTNEED)} for the whole
 * file: other processes' cached pages stay, and the benchmark needs no JNA of its own (so a run can
 * disable JNA to measure Cobble without kernel hints).
 */
final class PageCache {
  private PageCache() {}

  /** Evicts every (clean) page of every file under {@code dir}. */
  static void evict(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      files.filter(Files::isRegularFile).forEach(PageCache::evictFile);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads every file under {@code dir} once, sequentially, bringing it into the page cache. */
  static void load(Path dir) {
    byte[] buffer = new byte[1 << 20];
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path file : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        try (InputStream in = Files.newInputStream(file)) {
          while (in.read(buffer) >= 0) {
            // Reading is the point: the bytes themselves are not needed.
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void evictFile(Path file) {
    try {
      Process dd =
          new ProcessBuilder("dd", "if=" + file, "iflag=nocache", "count=0")
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (dd.waitFor() != 0) {
        throw new IllegalStateException("dd could not drop " + file + " from the page cache");
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run dd to drop " + file + " from the page cache", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted dropping " + file + " from the page cache", e);
    }
  }
}
