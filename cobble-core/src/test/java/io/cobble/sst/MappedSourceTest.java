package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.cache.BlockCache;
import io.cobble.iterator.KvIterator;
import io.cobble.storage.DataFile;
import io.cobble.util.DirectIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Block reads from a memory-mapped table: the same bytes as positional reads, the same corruption
 * errors, and a mapping that outlives {@link Table#close} exactly as long as a reader is inside it.
 * Seeded: {@code -Dcobble.mapped.seed=N} replays a run.
 */
class MappedSourceTest {
  private static final long SEED = Long.getLong("cobble.mapped.seed", System.nanoTime());

  @TempDir Path dir;

  private static byte[] key(int i) {
    return String.format("k/%08d", i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(Random r, int i) {
    byte[] v = new byte[1 + r.nextInt(300)];
    r.nextBytes(v);
    v[0] = (byte) i;
    return v;
  }

  /** Writes a table of every third key from 0 below {@code n}, returning its contents. */
  private TreeMap<Integer, byte[]> write(Path path, Random r, int n, boolean lz4) {
    TableOptions opts =
        TableOptions.builder()
            .blockSize(512 + r.nextInt(2048))
            .restartInterval(1 + r.nextInt(16))
            .bloomBitsPerKey(r.nextBoolean() ? 10 : 0)
            .partitionedIndex(r.nextBoolean())
            .lz4(lz4)
            .sync(false)
            .build();
    TreeMap<Integer, byte[]> contents = new TreeMap<>();
    TableBuilder b = new TableBuilder(path, opts);
    for (int i = 0; i < n; i += 3) {
      byte[] v = value(r, i);
      b.add(key(i), v);
      contents.put(i, v);
    }
    b.finish(1, Long.MAX_VALUE, Long.MAX_VALUE, Collections.emptyMap());
    return contents;
  }

  private static TableReadOptions reads(boolean mmap) {
    return TableReadOptions.builder().mmapReads(mmap).build();
  }

  @Test
  void mappedReadsEqualChannelReads() {
    Random r = new Random(SEED);
    for (int round = 0; round < 4; round++) {
      String msg = "seed " + SEED + " (-Dcobble.mapped.seed) round " + round;
      Path path = dir.resolve("00000" + round + ".sst");
      int n = 3000 + r.nextInt(9000);
      TreeMap<Integer, byte[]> contents = write(path, r, n, round % 2 == 0);
      // No cache on one side so that every block read of it goes through the source.
      BlockCache cache = round % 2 == 0 ? null : new BlockCache(64 << 10);
      try (Table mapped = Table.open(path, 1, cache, reads(true));
          Table channel = Table.open(path, 2, null, reads(false))) {
        assertInstanceOf(MappedSource.class, mapped.source(), msg);
        assertFalse(channel.source() instanceof MappedSource, msg);
        for (int q = 0; q < 4000; q++) {
          int i = r.nextInt(n + 10);
          byte[] k = key(i);
          long h = BloomFilter.hash(k);
          byte[] want = channel.get(k, h);
          assertArrayEquals(contents.get(i), want, msg + " channel key " + i);
          assertArrayEquals(want, mapped.get(k, h), msg + " mapped key " + i);
        }
        for (int readAhead : new int[] {0, 16 << 10}) {
          KvIterator a = mapped.iterator(readAhead);
          KvIterator b = channel.iterator(readAhead);
          int from = r.nextInt(n);
          a.seek(key(from));
          b.seek(key(from));
          while (b.valid()) {
            assertTrue(a.valid(), msg);
            assertArrayEquals(b.key(), a.key(), msg);
            assertArrayEquals(b.value(), a.value(), msg);
            a.next();
            b.next();
          }
          assertFalse(a.valid(), msg);
          a.close();
          b.close();
        }
      }
    }
  }

  @Test
  void directIoAndRemoteFilesAreNeverMapped() {
    Path path = dir.resolve("000001.sst");
    write(path, new Random(SEED), 3000, false);
    TableReadOptions direct =
        TableReadOptions.builder().directIo(new DirectIo(2048, 4)).mmapReads(true).build();
    try (Table t = Table.open(DataFile.local(path), -1, 1, null, direct)) {
      assertInstanceOf(DirectIoSource.class, t.source());
    }
  }

  @Test
  void aFlippedByteInAMappedBlockIsTheSameCorruption() throws IOException {
    Random r = new Random(SEED);
    Path path = dir.resolve("000001.sst");
    write(path, r, 6000, true);
    // Damage the middle of the first data block, after the table was mapped: the mapping shares
    // the page cache, so it sees the flipped byte as a read would.
    try (Table mapped = Table.open(path, 1, null, reads(true));
        Table channel = Table.open(path, 2, null, reads(false))) {
      flip(path, 40);
      CorruptionException viaChannel =
          assertThrows(
              CorruptionException.class, () -> channel.get(key(0), BloomFilter.hash(key(0))));
      CorruptionException viaMapping =
          assertThrows(
              CorruptionException.class, () -> mapped.get(key(0), BloomFilter.hash(key(0))));
      assertEquals(viaChannel.getMessage(), viaMapping.getMessage());
      assertTrue(
          viaMapping.getMessage().contains("data block at offset 0"), viaMapping.getMessage());
      assertTrue(viaMapping.getMessage().contains(path.toString()), viaMapping.getMessage());
      // A failed verification left the mapping: closing now releases it.
      MappedSource source = (MappedSource) mapped.source();
      mapped.close();
      assertTrue(source.unmapped());
    }
  }

  private static void flip(Path path, long offset) throws IOException {
    try (FileChannel ch =
        FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, offset);
      b.put(0, (byte) (b.get(0) ^ 0x5A));
      b.rewind();
      ch.write(b, offset);
    }
  }

  @Test
  void closeWaitsForTheLastReaderBeforeUnmapping() {
    Path path = dir.resolve("000001.sst");
    write(path, new Random(SEED), 3000, false);
    Table t = Table.open(path, 1, null, reads(true));
    MappedSource source = (MappedSource) t.source();
    ByteBuffer view = source.readDirect(64, 0);
    byte first = view.get(0);
    t.close();
    assertFalse(source.unmapped(), "unmapped while a reader was inside the mapping");
    assertEquals(first, view.get(0));
    source.doneDirect();
    assertTrue(source.unmapped(), "the last reader left a closed mapping: it must be released");
    // A read after close no longer enters the mapping: it fails as any read of a closed table.
    assertThrows(CobbleException.class, () -> source.readDirect(64, 0));
    source.doneDirect();
    assertTrue(source.unmapped());
  }

  @Test
  void readersRacingCloseSeeRightDataOrAClosedTable() throws Exception {
    Random r = new Random(SEED);
    Path path = dir.resolve("000001.sst");
    int n = 20_000;
    TreeMap<Integer, byte[]> contents = write(path, r, n, true);
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      for (int round = 0; round < 20; round++) {
        String msg = "seed " + SEED + " (-Dcobble.mapped.seed) round " + round;
        Table t = Table.open(path, 1, null, reads(true));
        MappedSource source = (MappedSource) t.source();
        CountDownLatch started = new CountDownLatch(3);
        AtomicBoolean closed = new AtomicBoolean();
        List<Future<Integer>> readers = new ArrayList<>();
        for (int w = 0; w < 3; w++) {
          long seed = r.nextLong();
          readers.add(
              pool.submit(
                  () -> {
                    Random rr = new Random(seed);
                    int reads = 0;
                    started.countDown();
                    while (true) {
                      int i = rr.nextInt(n);
                      byte[] v;
                      try {
                        v = t.get(key(i), BloomFilter.hash(key(i)));
                      } catch (CobbleException e) {
                        if (!closed.get()) {
                          throw new AssertionError(msg + ": failed before close", e);
                        }
                        return reads;
                      }
                      assertArrayEquals(contents.get(i), v, msg + " key " + i);
                      reads++;
                    }
                  }));
        }
        assertTrue(started.await(30, TimeUnit.SECONDS), msg);
        Thread.sleep(r.nextInt(5));
        closed.set(true);
        t.close();
        for (Future<Integer> f : readers) {
          f.get(60, TimeUnit.SECONDS);
        }
        assertTrue(source.unmapped(), msg + ": the mapping outlived its readers");
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
