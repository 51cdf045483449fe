package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CorruptionException;
import io.cobble.cache.BlockCache;
import io.cobble.iterator.KvIterator;
import io.cobble.util.Bytes;
import io.cobble.util.Crc;
import io.cobble.util.DirectIo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TableTest {
  @TempDir Path dir;

  private static byte[] key(int i) {
    return String.format("prefix/shared/%08d", i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(int i) {
    return String.format("value-%d-%s", i, "x".repeat(i % 50)).getBytes(StandardCharsets.UTF_8);
  }

  @ParameterizedTest(
      name = "partitioned {0} lz4 {1} bloom {2} pinTop {3} pinParts {4} direct {5} lazy {6}")
  @CsvSource({
    "true, true, true, true, true, false, false",
    "true, false, true, true, false, true, false",
    "false, true, true, false, false, false, false",
    "true, true, false, false, false, true, false",
    "false, false, false, true, true, false, false",
    "true, true, true, true, true, false, true",
    "false, true, true, true, false, false, true"
  })
  void writesAndReadsBackEveryEntry(
      boolean partitioned,
      boolean lz4,
      boolean bloom,
      boolean pinTop,
      boolean pinParts,
      boolean direct,
      boolean lazy) {
    int n = 20_000;
    Path path = dir.resolve("000001.sst");
    TableOptions opts =
        TableOptions.builder()
            .blockSize(1024)
            .restartInterval(8)
            .bloomBitsPerKey(bloom ? 10 : 0)
            .partitionedIndex(partitioned)
            .lz4(lz4)
            .sync(true)
            .build();
    TableBuilder b = new TableBuilder(path, opts);
    for (int i = 0; i < n; i += 2) {
      b.add(key(i), value(i));
    }
    TableProperties props = b.finish(3, 1234, Long.MAX_VALUE, Collections.singletonMap(7L, 2L));
    assertEquals(n / 2, props.entries());
    try (Table t =
        Table.open(
            path,
            1,
            new BlockCache(1 << 20),
            TableReadOptions.builder()
                .pinTopIndex(pinTop)
                .pinPartitions(pinParts)
                .lazyMetadata(lazy)
                .directIo(direct ? new DirectIo(2048, 4) : null)
                .build())) {
      assertEquals(3, t.properties().schemaId());
      assertEquals(1234, t.properties().maxExpiry());
      assertEquals(2L, t.properties().vlogRefs().get(7L));
      for (int i = 0; i < n; i++) {
        byte[] k = key(i);
        byte[] v = t.get(k, BloomFilter.hash(k));
        if (i % 2 == 0) {
          assertArrayEquals(value(i), v, "key " + i);
        } else {
          assertNull(v);
        }
      }
      KvIterator it = t.iterator(0);
      it.seekToFirst();
      for (int i = 0; i < n; i += 2) {
        assertTrue(it.valid());
        assertArrayEquals(key(i), it.key());
        it.next();
      }
      assertFalse(it.valid());
      KvIterator ra = t.iterator(64 * 1024);
      ra.seek(key(5001));
      assertArrayEquals(key(5002), ra.key());
      ra.seek(key(n + 5));
      assertFalse(ra.valid());
    }
  }

  /**
   * Writes keys {@code 0, step, 2 * step, ...} below {@code n} into a table of 1-KB blocks with a
   * partitioned index and a bloom filter.
   */
  private Path writePartitioned(int n, int step, boolean lz4) {
    Path path = dir.resolve("000001.sst");
    TableOptions opts =
        TableOptions.builder()
            .blockSize(1024)
            .restartInterval(4)
            .bloomBitsPerKey(10)
            .partitionedIndex(true)
            .lz4(lz4)
            .build();
    TableBuilder b = new TableBuilder(path, opts);
    for (int i = 0; i < n; i += step) {
      b.add(key(i), value(i));
    }
    b.finish(1, Long.MAX_VALUE, Long.MAX_VALUE, Collections.emptyMap());
    return path;
  }

  /**
   * Data blocks sit in the block cache in the kept form (restart words first), and gets and scans
   * read the same cached form.
   */
  @ParameterizedTest(name = "lz4 {0}")
  @CsvSource({"false", "true"})
  void theBlockCacheHoldsDataBlocksInTheKeptFormForGetsAndScans(boolean lz4) {
    Path path = writePartitioned(2_000, 1, lz4);
    BlockCache cache = new BlockCache(1 << 20);
    try (Table t = Table.open(path, 1, cache, TableReadOptions.builder().build())) {
      assertArrayEquals(value(0), t.get(key(0), BloomFilter.hash(key(0))));
      // The first data block starts the file.
      BlockCache.Pin pin = new BlockCache.Pin();
      assertTrue(cache.acquire(BlockCache.key(1, 0), pin));
      BlockIterator cached = new BlockIterator().resetKept(pin.data(), pin.length());
      cache.release(pin);
      assertTrue(cached.seekExact(key(3), BloomFilter.hash(key(3))));
      long hits = cache.hits();
      KvIterator it = t.iterator(0);
      it.seekToFirst();
      for (int i = 0; i < 2_000; i++) {
        assertArrayEquals(key(i), it.key());
        assertArrayEquals(value(i), it.value());
        it.next();
      }
      assertFalse(it.valid());
      assertTrue(cache.hits() > hits, "the scan read the block the get cached");
      for (int i = 0; i < 2_000; i += 7) {
        assertArrayEquals(value(i), t.get(key(i), BloomFilter.hash(key(i))), "key " + i);
      }
    }
  }

  /**
   * Gets and cursors that read cached blocks by reference ({@link io.cobble.cache.BlockRefs}) find
   * the right block of the right index partition while two threads read a table eight times the
   * cache's size, so blocks keep leaving the cache and their arrays keep being reused.
   */
  @Test
  void readsByReferenceFindTheirBlocksWhileTheCacheChurns() throws Exception {
    int n = 20_000;
    Path path = writePartitioned(n, 2, false);
    BlockCache cache = new BlockCache(Files.size(path) / 8);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    TableReadOptions pinned =
        TableReadOptions.builder().pinTopIndex(true).pinPartitions(true).build();
    try (Table t = Table.open(path, 1, cache, pinned)) {
      assertTrue(t.decodedIndex().indexDecoded.length > 4, "several index partitions");
      Thread[] readers = new Thread[2];
      for (int r = 0; r < readers.length; r++) {
        SplittableRandom random = new SplittableRandom(r);
        readers[r] =
            new Thread(
                () -> {
                  try {
                    KvIterator it = t.iterator(0);
                    for (int round = 0; round < 40_000; round++) {
                      // Mostly a few hot blocks, so that blocks are hit while cached.
                      int i = random.nextInt(4) > 0 ? random.nextInt(400) : random.nextInt(n);
                      byte[] got = t.get(key(i), BloomFilter.hash(key(i)));
                      if (i % 2 == 0 ? !Arrays.equals(value(i), got) : got != null) {
                        throw new AssertionError("get of key " + i);
                      }
                      it.seek(key(i));
                      for (int j = i + (i % 2); j < Math.min(n, i + 8); j += 2) {
                        if (!it.valid()
                            || !Arrays.equals(key(j), it.key())
                            || !Arrays.equals(value(j), it.value())) {
                          throw new AssertionError("scan from key " + i + " at key " + j);
                        }
                        it.next();
                      }
                    }
                    it.close();
                  } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                  }
                });
        readers[r].start();
      }
      for (Thread reader : readers) {
        reader.join();
      }
    }
    if (failure.get() != null) {
      throw new AssertionError(failure.get());
    }
    assertTrue(cache.misses() > 1000, "blocks left the cache: " + cache.misses() + " misses");
    assertTrue(cache.hits() > cache.misses(), "hits " + cache.hits());
  }

  /**
   * A data block whose checksum holds but whose restarts do not is a corruption error naming the
   * table when the cache takes it in, for a get and for a scan, and is never cached.
   */
  @Test
  void aMalformedDataBlockWithAValidChecksumIsACorruptionError() throws IOException {
    Path path = dir.resolve("000001.sst");
    TableOptions opts =
        TableOptions.builder().blockSize(1024).restartInterval(4).bloomBitsPerKey(0).build();
    TableBuilder b = new TableBuilder(path, opts);
    BlockBuilder same = new BlockBuilder(4);
    for (int i = 0; i < 10; i++) {
      b.add(key(i), value(i));
      same.add(key(i), value(i));
    }
    b.finish(1, Long.MAX_VALUE, Long.MAX_VALUE, Collections.emptyMap());
    // The table's only data block starts the file: payload, type byte, CRC32C of both.
    int payload = same.finish().length;
    byte[] file = Files.readAllBytes(path);
    Bytes.putInt(file, payload - 4, 1 << 20);
    Bytes.putInt(file, payload + 1, Crc.crc32c(file, 0, payload + 1));
    Files.write(path, file);
    BlockCache cache = new BlockCache(1 << 20);
    try (Table t = Table.open(path, 1, cache, TableReadOptions.builder().build())) {
      for (int round = 0; round < 2; round++) {
        CorruptionException get =
            assertThrows(CorruptionException.class, () -> t.get(key(3), BloomFilter.hash(key(3))));
        assertTrue(get.getMessage().contains(path.toString()), get.getMessage());
        KvIterator it = t.iterator(0);
        CorruptionException scan = assertThrows(CorruptionException.class, it::seekToFirst);
        assertTrue(scan.getMessage().contains(path.toString()), scan.getMessage());
        it.close();
      }
      assertFalse(cache.acquire(BlockCache.key(1, 0), new BlockCache.Pin()), "never cached");
    }
  }

  @ParameterizedTest
  @CsvSource({"1", "16"})
  void blockPrefixCompressionRoundTrips(int restartInterval) {
    BlockBuilder bb = new BlockBuilder(restartInterval);
    for (int i = 0; i < 500; i++) {
      bb.add(key(i * 3), value(i));
    }
    Block block = new Block(bb.finish());
    BlockIterator it = block.iterator();
    for (int i = 0; i < 500; i++) {
      it.seek(key(i * 3 - (i > 0 ? 1 : 0)));
      assertArrayEquals(key(i * 3), it.key());
      assertArrayEquals(value(i), it.value());
    }
    it.seek(key(10_000));
    assertFalse(it.valid());
  }

  @ParameterizedTest
  @CsvSource({"4,true", "10,true", "20,true", "4,false", "10,false", "20,false"})
  void bloomFilterHasNoFalseNegativesAndFewFalsePositives(int bitsPerKey, boolean cacheLocal) {
    int n = 10_000;
    long[] hashes = new long[n];
    for (int i = 0; i < n; i++) {
      hashes[i] = BloomFilter.hash(key(i));
    }
    byte[] filter =
        cacheLocal ? BloomFilter.build(hashes, n, bitsPerKey) : buildPlain(hashes, n, bitsPerKey);
    int fp = 0;
    for (int i = 0; i < n; i++) {
      assertTrue(BloomFilter.mayContain(filter, hashes[i]));
      if (BloomFilter.mayContain(filter, BloomFilter.hash(key(n + i)))) {
        fp++;
      }
    }
    double rate = fp / (double) n;
    double bound = bitsPerKey >= 10 ? 0.03 : 0.25;
    assertTrue(rate < bound, "false positive rate " + rate);
  }

  /**
   * A filter in the plain layout files written before cache-local filters carry (trailer = probe
   * count, probes spread over the whole array): readers must keep answering it correctly.
   */
  private static byte[] buildPlain(long[] hashes, int count, int bitsPerKey) {
    int probes = Math.max(1, Math.min(30, (int) Math.round(bitsPerKey * 0.69)));
    long bits = Math.max(64, (long) count * bitsPerKey);
    int bytes = (int) ((bits + 7) / 8);
    byte[] out = new byte[bytes + 1];
    long nbits = (long) bytes * 8;
    for (int i = 0; i < count; i++) {
      long h = hashes[i];
      long bit = (h & 0xFFFFFFFFL) % nbits;
      long step = ((h >>> 32) | 1) % nbits;
      for (int p = 0; p < probes; p++) {
        out[(int) (bit >>> 3)] |= (byte) (1 << (bit & 7));
        bit += step;
        if (bit >= nbits) {
          bit -= nbits;
        }
      }
    }
    out[bytes] = (byte) probes;
    return out;
  }
}
