package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CorruptionException;
import io.cobble.cache.BlockCache;
import io.cobble.iterator.KvIterator;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sequential (read-ahead) table cursor, as compaction uses, decodes every data block into one
 * array it reuses: blocks of very different sizes, raw and LZ4 framed, in any order, must read back
 * exactly, also when the cursor moves on to another table, and a damaged block must fail with a
 * {@link CorruptionException} instead of serving what the array held before.
 */
class SequentialReadBlockReuseTest {
  @TempDir Path dir;

  private final long seed = Long.getLong("cobble.block-reuse.seed", System.nanoTime());

  private static byte[] key(int table, int i) {
    return String.format("t%d/key/%08d", table, i)
        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /**
   * Values whose sizes jump between 1 byte and 24 KB (a block of one large entry, then blocks of
   * many small ones, so a block is often shorter than the one before) and whose bytes are either
   * random (the frame stays raw) or repetitive (LZ4).
   */
  private static List<byte[]> values(Random random, int n) {
    List<byte[]> values = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int size;
      switch (random.nextInt(4)) {
        case 0:
          size = 1 + random.nextInt(24 * 1024);
          break;
        case 1:
          size = 1 + random.nextInt(8);
          break;
        default:
          size = 1 + random.nextInt(300);
      }
      byte[] v = new byte[size];
      if (random.nextBoolean()) {
        random.nextBytes(v);
      } else {
        Arrays.fill(v, (byte) ('a' + random.nextInt(26)));
      }
      values.add(v);
    }
    return values;
  }

  private Path write(int table, List<byte[]> values) {
    Path path = dir.resolve(String.format("%06d.sst", table));
    TableOptions opts =
        TableOptions.builder().blockSize(4096).restartInterval(16).lz4(true).build();
    TableBuilder b = new TableBuilder(path, opts);
    for (int i = 0; i < values.size(); i++) {
      b.add(key(table, i), values.get(i));
    }
    b.finish(1, Long.MAX_VALUE, Long.MAX_VALUE, Collections.emptyMap());
    return path;
  }

  private static Table open(Path path, int fileNumber) {
    return Table.open(
        path, fileNumber, new BlockCache(1 << 20), TableReadOptions.builder().build());
  }

  /** Reads every entry in place, as merging readers do, and compares it with what was written. */
  private static void assertReadsBack(KvIterator it, int table, List<byte[]> values) {
    it.seekToFirst();
    for (int i = 0; i < values.size(); i++) {
      assertTrue(it.valid(), "entry " + i + " of table " + table + " missing");
      assertArrayEquals(
          key(table, i),
          Arrays.copyOfRange(it.keyArray(), it.keyOffset(), it.keyOffset() + it.keyLength()),
          "key " + i);
      assertArrayEquals(
          values.get(i),
          Arrays.copyOfRange(
              it.valueArray(), it.valueOffset(), it.valueOffset() + it.valueLength()),
          "value " + i + " of table " + table);
      it.next();
    }
    assertFalse(it.valid());
  }

  @Test
  void blocksOfChangingSizesReadBackExactlyAcrossTables() {
    Random random = new Random(seed);
    List<byte[]> first = values(random, 1500);
    List<byte[]> second = values(random, 1500);
    // Small read-ahead chunks (a block that does not fit is read on its own) and large ones.
    for (int readAhead : new int[] {1, 8 * 1024, 256 * 1024}) {
      try (Table a = open(write(1, first), 1);
          Table b = open(write(2, second), 2)) {
        KvIterator it = a.iterator(readAhead);
        assertReadsBack(it, 1, first);
        KvIterator reopened = b.iterator(readAhead, it);
        assertReadsBack(reopened, 2, second);
        reopened.close();
      } catch (AssertionError e) {
        throw new AssertionError(
            "seed " + seed + " (-Dcobble.block-reuse.seed), readAhead " + readAhead, e);
      }
    }
  }

  @Test
  void aDamagedBlockAfterGoodOnesFailsWithCorruption() throws IOException {
    Random random = new Random(seed);
    List<byte[]> values = values(random, 1500);
    Path path = write(1, values);
    long dataEnd;
    try (Table t = open(path, 1)) {
      // The data blocks come first; the middle of the file lies inside them.
      dataEnd = t.fileSize() / 2;
    }
    try (RandomAccessFile f = new RandomAccessFile(path.toFile(), "rw")) {
      f.seek(dataEnd);
      int b = f.read();
      f.seek(dataEnd);
      f.write(b ^ 0x5A);
    }
    for (int readAhead : new int[] {1, 64 * 1024}) {
      try (Table t = open(path, 1)) {
        KvIterator it = t.iterator(readAhead);
        CorruptionException e =
            assertThrows(
                CorruptionException.class,
                () -> {
                  int i = 0;
                  for (it.seekToFirst(); it.valid(); it.next(), i++) {
                    // Every entry served before the damaged block must still be exact.
                    assertArrayEquals(
                        values.get(i),
                        Arrays.copyOfRange(
                            it.valueArray(), it.valueOffset(), it.valueOffset() + it.valueLength()),
                        "seed " + seed + ", value " + i);
                  }
                });
        assertTrue(
            e.getMessage().contains(path.getFileName().toString()),
            "names the table: " + e.getMessage());
        it.close();
      }
    }
  }
}
