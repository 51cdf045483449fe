package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CorruptionException;
import io.cobble.cache.BlockCache;
import io.cobble.util.Bytes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@link DataBlockHash} index of data blocks: what the builder writes, that point gets answer
 * from it (not from a binary search that would succeed anyway), what a damaged index does, and the
 * table format version that marks files carrying it.
 */
class DataBlockHashTest {
  @TempDir Path dir;

  private static byte[] key(int i) {
    return String.format("user/%08d", i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(int i) {
    return ("v" + i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] block(int entries, int restartInterval) {
    BlockBuilder b = new BlockBuilder(restartInterval, true);
    for (int i = 0; i < entries; i++) {
      b.add(key(i * 2), value(i));
    }
    return b.finish();
  }

  /** Offset of the first bucket of a hash-indexed block. */
  private static int bucketsOffset(byte[] raw) {
    return Block.restartsEnd(raw, raw.length, Bytes.getInt(raw, raw.length - 4));
  }

  private static int bucketCount(byte[] raw) {
    return Bytes.getShort(raw, raw.length - 6);
  }

  @Test
  void everyKeysBucketNamesItsRestartGroup() {
    int entries = 100;
    int interval = 4;
    byte[] raw = block(entries, interval);
    assertTrue(Bytes.getInt(raw, raw.length - 4) < 0, "trailer flags the hash index");
    assertEquals(DataBlockHash.bucketCount(entries), bucketCount(raw));
    int buckets = bucketCount(raw);
    int offset = bucketsOffset(raw);
    int named = 0;
    for (int i = 0; i < entries; i++) {
      int group = raw[offset + DataBlockHash.bucket(BloomFilter.hash(key(i * 2)), buckets)] & 0xFF;
      if (group != DataBlockHash.COLLISION) {
        assertEquals(i / interval, group, "bucket of key " + i);
        named++;
      }
    }
    // 100 keys in 201 buckets: about 60 % are alone or with keys of their own group; far fewer
    // would mean hashes that do not spread.
    assertTrue(named > entries / 3, named + " of " + entries + " keys have their own bucket");
  }

  @Test
  void pointGetsAnswerFromTheIndex() {
    int entries = 100;
    byte[] raw = block(entries, 4);
    BlockIterator it = new BlockIterator().reset(raw, raw.length);
    for (int i = 0; i < entries; i++) {
      byte[] k = key(i * 2);
      assertTrue(it.seekExact(k, BloomFilter.hash(k)), "key " + i);
      assertArrayEquals(value(i), valueOf(it));
    }
    // Empty every bucket: a reader that ignored the index would still find every key.
    int offset = bucketsOffset(raw);
    for (int b = 0; b < bucketCount(raw); b++) {
      raw[offset + b] = (byte) DataBlockHash.EMPTY;
    }
    it.reset(raw, raw.length);
    for (int i = 0; i < entries; i++) {
      byte[] k = key(i * 2);
      assertFalse(it.seekExact(k, BloomFilter.hash(k)), "key " + i + " despite empty buckets");
      // Iterators (scans) do not use the index.
      it.seek(k);
      assertArrayEquals(k, it.key());
    }
    // Mark every bucket a collision: the binary search finds every key again.
    for (int b = 0; b < bucketCount(raw); b++) {
      raw[offset + b] = (byte) DataBlockHash.COLLISION;
    }
    it.reset(raw, raw.length);
    for (int i = 0; i < entries; i++) {
      byte[] k = key(i * 2);
      assertTrue(it.seekExact(k, BloomFilter.hash(k)), "key " + i + " after collisions");
      assertArrayEquals(value(i), valueOf(it));
      byte[] absent = key(i * 2 + 1);
      assertFalse(it.seekExact(absent, BloomFilter.hash(absent)));
    }
  }

  @Test
  void blockWithMoreRestartsThanABucketCanNameHasNoIndex() {
    int entries = DataBlockHash.MAX_RESTARTS + 1;
    byte[] raw = block(entries, 1);
    assertEquals(entries, Bytes.getInt(raw, raw.length - 4), "plain trailer");
    BlockIterator it = new BlockIterator().reset(raw, raw.length);
    for (int i = 0; i < entries; i++) {
      byte[] k = key(i * 2);
      assertTrue(it.seekExact(k, BloomFilter.hash(k)), "key " + i);
    }
  }

  @Test
  void damagedIndexIsAnErrorNotAWrongAnswer() {
    byte[] raw = block(100, 16);
    int offset = bucketsOffset(raw);
    for (int b = 0; b < bucketCount(raw); b++) {
      raw[offset + b] = (byte) 200;
    }
    BlockIterator it = new BlockIterator().reset(raw, raw.length);
    byte[] k = key(0);
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> it.seekExact(k, BloomFilter.hash(k)));
    assertTrue(e.getMessage().contains("hash index"), e.getMessage());

    byte[] badCount = block(100, 16);
    Bytes.putInt(badCount, badCount.length - 8, 0x0000_FFFF); // bucket count beyond the block
    IllegalStateException count =
        assertThrows(
            IllegalStateException.class,
            () -> new BlockIterator().reset(badCount, badCount.length));
    assertTrue(count.getMessage().contains("bucket count"), count.getMessage());
  }

  @Test
  void tablesWithTheIndexAreFormatTwoAndWithoutItStayFormatOne() throws IOException {
    for (boolean hash : new boolean[] {false, true}) {
      Path path = dir.resolve(hash ? "000002.sst" : "000001.sst");
      TableBuilder b =
          new TableBuilder(
              path,
              TableOptions.builder()
                  .blockSize(512)
                  .bloomBitsPerKey(10)
                  .dataBlockHashIndex(hash)
                  .build());
      for (int i = 0; i < 2000; i++) {
        b.add(key(i * 2), value(i));
      }
      b.finish(1, Long.MAX_VALUE, Long.MAX_VALUE, Collections.emptyMap());
      byte[] file = Files.readAllBytes(path);
      int version = Bytes.getInt(file, file.length - Footer.SIZE + 24);
      assertEquals(hash ? 2 : 1, version, "format version, hash index " + hash);
      try (Table t =
          Table.open(path, 1, new BlockCache(1 << 20), TableReadOptions.builder().build())) {
        for (int i = 0; i < 4000; i++) {
          byte[] k = key(i);
          byte[] v = t.get(k, BloomFilter.hash(k));
          if (i % 2 == 0) {
            assertArrayEquals(value(i / 2), v, "key " + i);
          } else {
            assertNull(v, "key " + i);
          }
        }
      }
    }
  }

  @Test
  void newerFormatVersionIsRefusedByName() throws IOException {
    Path path = dir.resolve("000003.sst");
    TableBuilder b =
        new TableBuilder(path, TableOptions.builder().dataBlockHashIndex(true).build());
    b.add(key(0), value(0));
    b.finish(1, Long.MAX_VALUE, Long.MAX_VALUE, Collections.emptyMap());
    byte[] file = Files.readAllBytes(path);
    byte[] footer = java.util.Arrays.copyOfRange(file, file.length - Footer.SIZE, file.length);
    Bytes.putInt(footer, 24, Footer.FORMAT_VERSION + 1);
    Bytes.putInt(footer, Footer.SIZE - 4, io.cobble.util.Crc.crc32c(footer, 0, Footer.SIZE - 4));
    System.arraycopy(footer, 0, file, file.length - Footer.SIZE, Footer.SIZE);
    Files.write(path, file);
    CorruptionException e =
        assertThrows(
            CorruptionException.class,
            () -> Table.open(path, 1, null, TableReadOptions.builder().build()).close());
    assertTrue(
        e.getMessage().contains("unsupported table format version " + (Footer.FORMAT_VERSION + 1)),
        e.getMessage());
  }

  private static byte[] valueOf(BlockIterator it) {
    return java.util.Arrays.copyOfRange(
        it.valueArray(), it.valueOffset(), it.valueOffset() + it.valueLength());
  }
}
