package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CorruptionException;
import io.cobble.cache.BlockCache;
import io.cobble.util.ValueSink;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Tables that keep the data blocks point reads bring in ({@link ResidentBlocks}). */
class ResidentBlocksTest {
  private static final int N = 20_000;

  @TempDir Path dir;

  private static byte[] key(int i) {
    return String.format("prefix/shared/%08d", i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(int i) {
    return String.format("value-%d-%s", i, "x".repeat(i % 50)).getBytes(StandardCharsets.UTF_8);
  }

  /** Every even key of 0..N-1, in 1 KB blocks. */
  private Path build(boolean lz4) {
    Path path = dir.resolve(lz4 ? "000002.sst" : "000001.sst");
    TableOptions opts =
        TableOptions.builder()
            .blockSize(1024)
            .restartInterval(8)
            .bloomBitsPerKey(10)
            .partitionedIndex(true)
            .lz4(lz4)
            .build();
    TableBuilder b = new TableBuilder(path, opts);
    for (int i = 0; i < N; i += 2) {
      b.add(key(i), value(i));
    }
    b.finish(1, Long.MAX_VALUE, Long.MAX_VALUE, Collections.emptyMap());
    return path;
  }

  private static Table open(Path path, BlockCache cache, boolean resident) {
    return Table.open(
        path,
        1,
        cache,
        TableReadOptions.builder()
            .pinTopIndex(true)
            .pinPartitions(true)
            .residentBlocks(resident)
            .build());
  }

  private static void assertAnswers(Table t, int i) {
    byte[] k = key(i);
    byte[] v = t.get(k, BloomFilter.hash(k));
    if (i % 2 == 0 && i < N) {
      assertArrayEquals(value(i), v, "key " + i);
    } else {
      assertNull(v, "key " + i);
    }
  }

  @ParameterizedTest(name = "lz4 {0}")
  @CsvSource({"false", "true"})
  void keptBlocksAnswerWithoutTheLruAndGiveTheMemoryBackOnClose(boolean lz4) throws IOException {
    Path path = build(lz4);
    BlockCache cache = new BlockCache(64 << 20);
    Table t = open(path, cache, true);
    var scan = t.iterator(0);
    for (scan.seekToFirst(); scan.valid(); scan.next()) {
      assertTrue(scan.valueLength() > 0);
    }
    assertEquals(0, cache.reserved(), "nothing is set aside for scans");
    long scanLookups = cache.hits() + cache.misses();
    Random r = new Random(7);
    for (int round = 0; round < 3; round++) {
      for (int n = 0; n < N; n++) {
        assertAnswers(t, r.nextInt(N + 10));
      }
    }
    assertEquals(scanLookups, cache.hits() + cache.misses(), "no point read used the LRU");
    long kept = t.residentBytes();
    long step = Files.size(path) / 8;
    assertTrue(
        kept > 0 && kept <= cache.reserved() && cache.reserved() < kept + step,
        kept + " kept, " + cache.reserved() + " set aside");
    // Scans still read through the LRU and see the same entries.
    var it = t.iterator(0);
    it.seekToFirst();
    for (int i = 0; i < N; i += 2) {
      assertArrayEquals(key(i), it.key());
      it.next();
    }
    t.close();
    assertEquals(0, cache.reserved());
  }

  @Test
  void aSinksOwnExceptionPassesThroughUnchangedFromKeptBlocks() throws IOException {
    Table t = open(build(false), new BlockCache(64 << 20), true);
    byte[] k = key(42);
    IllegalStateException thrown = new IllegalStateException("the sink's own");
    ValueSink failing =
        (buf, off, len) -> {
          throw thrown;
        };
    // The first read keeps the block, the second finds it kept: both hand the sink's error on.
    for (int read = 0; read < 2; read++) {
      assertSame(
          thrown,
          assertThrows(IllegalStateException.class, () -> t.get(k, BloomFilter.hash(k), failing)));
    }
    assertTrue(t.residentBytes() > 0);
    assertAnswers(t, 42);
    t.close();
  }

  @Test
  void aCacheTooSmallKeepsWhatFitsAndReadsTheRestThroughTheLru() throws IOException {
    Path path = build(false);
    long size = Files.size(path);
    // Room for a few eighths of the table only.
    BlockCache cache = new BlockCache(size / 2);
    try (Table t = open(path, cache, true)) {
      for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
          assertAnswers(t, i);
        }
      }
      assertTrue(t.residentBytes() > 0, "kept what the reservation steps allowed");
      assertTrue(
          cache.reserved() <= size / 2 - size / 16,
          "at most 7/8 of the cache: " + cache.reserved());
      assertTrue(t.residentBytes() < size / 2, "not every block is kept");
      assertTrue(cache.misses() > 0, "the blocks not kept went through the LRU");
    }
    assertEquals(0, cache.reserved());
  }

  @Test
  void concurrentReadersKeepEachBlockOnce() throws Exception {
    Path path = build(true);
    long sequential;
    try (Table t = open(path, new BlockCache(64 << 20), true)) {
      for (int i = 0; i < N; i++) {
        assertAnswers(t, i);
      }
      sequential = t.residentBytes();
    }
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      // Fresh tables whose four readers start together and read the keys in the same order.
      for (int round = 0; round < 3; round++) {
        try (Table t = open(path, new BlockCache(64 << 20), true)) {
          CountDownLatch start = new CountDownLatch(1);
          List<Future<?>> done = new ArrayList<>();
          for (int w = 0; w < 4; w++) {
            done.add(
                pool.submit(
                    () -> {
                      start.await();
                      for (int i = 0; i < N; i++) {
                        assertAnswers(t, i);
                      }
                      return null;
                    }));
          }
          start.countDown();
          for (Future<?> f : done) {
            f.get();
          }
          assertEquals(sequential, t.residentBytes(), "a block kept twice is charged twice");
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** The reader that loses the race to keep a block reads the winner's bytes, charged once. */
  @Test
  void aBlockKeptTwiceAtOnceIsKeptAndChargedOnce() {
    BlockCache cache = new BlockCache(64 << 20);
    ResidentBlocks blocks = new ResidentBlocks(4, cache, 8 << 10);
    byte[] first = new byte[1000];
    byte[] second = new byte[1000];
    assertSame(first, blocks.keep(2, first));
    assertSame(first, blocks.keep(2, second));
    assertSame(first, blocks.get(2));
    assertEquals(1000, blocks.used());
    assertTrue(cache.reserved() >= 1000, "set aside in eighths of the file: " + cache.reserved());
    blocks.release();
    assertEquals(0, cache.reserved());
  }

  @Test
  void aDamagedBlockIsACorruptionErrorEveryTimeAndNeverKept() throws IOException {
    Path path = build(false);
    try (RandomAccessFile f = new RandomAccessFile(path.toFile(), "rw")) {
      f.seek(300);
      int b = f.read();
      f.seek(300);
      f.write(b ^ 0x10);
    }
    try (Table t = open(path, new BlockCache(64 << 20), true)) {
      int failed = 0;
      for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
          try {
            assertAnswers(t, i);
          } catch (CorruptionException e) {
            assertTrue(e.getMessage().contains(path.toString()), e.getMessage());
            failed++;
          }
        }
      }
      assertTrue(failed > 0 && failed % 2 == 0, "the damaged block fails both rounds: " + failed);
    }
  }

  @Test
  void aMemoryOnlyReadOfABlockNotKeptYetNeedsStorage() {
    Path path = build(false);
    try (Table t = open(path, new BlockCache(64 << 20), true)) {
      byte[] k = key(42);
      MemoryOnlyReads.begin();
      try {
        assertThrows(MemoryOnlyReads.NotInMemory.class, () -> t.get(k, BloomFilter.hash(k)));
      } finally {
        MemoryOnlyReads.end();
      }
      assertAnswers(t, 42);
      MemoryOnlyReads.begin();
      try {
        assertAnswers(t, 42);
      } finally {
        MemoryOnlyReads.end();
      }
    }
  }
}
