package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.cobble.cache.BlockCache;
import io.cobble.iterator.KvIterator;
import io.cobble.storage.DataFile;
import io.cobble.util.Bytes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A table opened from its builder's {@link WrittenMetadata} answers exactly as the same file opened
 * by reading its metadata back: random tables, table options and read options, compared on point
 * reads (present and absent keys), full scans, seeks and prefix-filter range checks.
 */
class WrittenMetadataTest {
  @TempDir Path dir;

  @Test
  void handedOverMetadataReadsLikeTheFile() {
    Random r = new Random(0x5eed);
    for (int round = 0; round < 40; round++) {
      compareOneTable(r, round);
    }
  }

  private void compareOneTable(Random r, int round) {
    int prefixLength = r.nextBoolean() ? 0 : 1 + r.nextInt(3);
    int blockSize = r.nextBoolean() ? 256 : 4096;
    int bloomBits = r.nextInt(3) == 0 ? 0 : 10;
    boolean hashIndex = r.nextBoolean();
    boolean partitioned = r.nextBoolean();
    TableOptions opts =
        TableOptions.builder()
            .blockSize(blockSize)
            .restartInterval(1 + r.nextInt(16))
            .bloomBitsPerKey(bloomBits)
            .dataBlockHashIndex(hashIndex)
            .partitionedIndex(partitioned)
            .lz4(r.nextBoolean())
            .prefixFilterLength(prefixLength)
            .build();
    TreeMap<byte[], byte[]> rows = new TreeMap<>(WrittenMetadataTest::compare);
    int n = 1 + r.nextInt(r.nextBoolean() ? 50 : 5_000);
    while (rows.size() < n) {
      rows.put(randomKey(r), randomBytes(r, r.nextInt(r.nextBoolean() ? 8 : 300)));
    }
    Path path = dir.resolve(round + ".sst");
    TableBuilder b = new TableBuilder(path, opts);
    rows.forEach(b::add);
    b.finish(1, 0, Long.MAX_VALUE, Collections.emptyMap());
    boolean pinTop = r.nextInt(4) != 0;
    TableReadOptions read =
        TableReadOptions.builder()
            .pinTopIndex(pinTop)
            .pinPartitions(r.nextBoolean())
            .lazyMetadata(r.nextInt(4) == 0)
            .mmapReads(r.nextBoolean())
            .build();
    BlockCache cache = r.nextBoolean() ? new BlockCache(1 << 20) : null;
    BlockCache handedCache = cache == null ? null : new BlockCache(1 << 20);
    try (Table fromFile = Table.open(DataFile.local(path), -1, 1, cache, read);
        Table handed = Table.open(DataFile.local(path), -1, 1, handedCache, read, b.written())) {
      String what =
          String.format(
              "round %d: %d rows, block %d, bloom %d, hash index %b, partitioned %b, prefix %d,"
                  + " pin top %b, pin partitions %b, lazy %b, cache %b",
              round,
              n,
              blockSize,
              bloomBits,
              hashIndex,
              partitioned,
              prefixLength,
              read.pinTopIndex(),
              read.pinPartitions(),
              read.lazyMetadata(),
              cache != null);
      assertEquals(fromFile.properties().entries(), handed.properties().entries(), what);
      assertArrayEquals(fromFile.properties().smallest(), handed.properties().smallest(), what);
      assertArrayEquals(fromFile.properties().largest(), handed.properties().largest(), what);
      assertEquals(fromFile.prefixFilterLength(), handed.prefixFilterLength(), what);
      List<byte[]> keys = new ArrayList<>(rows.keySet());
      for (int i = 0; i < 300; i++) {
        byte[] key = r.nextBoolean() ? keys.get(r.nextInt(keys.size())) : randomKey(r);
        long hash = BloomFilter.hash(key, 0, key.length);
        byte[] expected = rows.get(key);
        byte[] got = fromFile.get(key, hash);
        assertArrayEquals(expected, got, what);
        assertArrayEquals(got, handed.get(key, hash), what);
        byte[] lo = randomKey(r);
        byte[] hi = randomKey(r);
        assertEquals(fromFile.mayHoldRange(lo, hi), handed.mayHoldRange(lo, hi), what);
      }
      compareScans(r, fromFile, handed, what);
    }
  }

  private static void compareScans(Random r, Table fromFile, Table handed, String what) {
    for (int readAhead : new int[] {0, 1 << 16}) {
      try (KvIterator a = fromFile.iterator(readAhead);
          KvIterator b = handed.iterator(readAhead)) {
        a.seekToFirst();
        b.seekToFirst();
        assertSameRest(a, b, -1, what);
        for (int i = 0; i < 20; i++) {
          byte[] target = randomKey(r);
          a.seek(target);
          b.seek(target);
          assertSameRest(a, b, 1 + r.nextInt(50), what);
        }
      }
    }
  }

  /** Steps both iterators together for {@code steps} entries (all when negative). */
  private static void assertSameRest(KvIterator a, KvIterator b, int steps, String what) {
    for (int i = 0; steps < 0 || i < steps; i++) {
      assertEquals(a.valid(), b.valid(), what);
      if (!a.valid()) {
        return;
      }
      assertArrayEquals(a.key(), b.key(), what);
      assertArrayEquals(a.value(), b.value(), what);
      a.next();
      b.next();
    }
  }

  @Test
  void blocksNotWrittenAreNotHandedOver() {
    Path path = dir.resolve("one.sst");
    TableBuilder b = new TableBuilder(path, TableOptions.builder().blockSize(256).build());
    for (int i = 0; i < 100; i++) {
      b.add(new byte[] {(byte) i}, new byte[] {(byte) i});
    }
    b.finish(1, 0, Long.MAX_VALUE, Collections.emptyMap());
    WrittenMetadata w = b.written();
    // The first data block is not metadata; the top-level index and properties are.
    assertNull(w.block(new BlockHandle(0, 10)));
    assertNotNull(w.block(w.footer().topIndex()));
    assertNotNull(w.block(w.footer().properties()));
  }

  private static byte[] randomKey(Random r) {
    // A small alphabet and short lengths, so prefixes repeat and absent keys fall between.
    byte[] k = new byte[1 + r.nextInt(12)];
    for (int i = 0; i < k.length; i++) {
      k[i] = (byte) ('a' + r.nextInt(4));
    }
    return k;
  }

  private static byte[] randomBytes(Random r, int len) {
    byte[] b = new byte[len];
    for (int i = 0; i < len; i++) {
      b[i] = (byte) (r.nextInt(3) == 0 ? r.nextInt() : 'v');
    }
    return b;
  }

  private static int compare(byte[] a, byte[] b) {
    return Bytes.compare(a, b);
  }
}
