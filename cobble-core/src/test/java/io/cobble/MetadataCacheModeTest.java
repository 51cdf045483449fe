package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.sst.Block;
import io.cobble.sst.BlockHandle;
import io.cobble.sst.BlockIterator;
import io.cobble.sst.Footer;
import io.cobble.util.ByteReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code sst.read-metadata-cache.mode}: when pinned index and filter metadata is decoded. */
class MetadataCacheModeTest {
  private static final int KEYS = 3000;

  @TempDir Path dir;

  private static Config config(String mode) {
    return Config.builder()
        .set("sst.read-metadata-cache.mode", mode)
        .set("sst.block-size", "1kb")
        .set("sst.pinned-metadata.max-level", 6)
        .build();
  }

  private static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(UTF_8);
  }

  private static byte[] value(int i) {
    return String.format("value-%06d", i).getBytes(UTF_8);
  }

  /** One compacted table of KEYS rows; returns its path. */
  private Path build() throws IOException {
    try (SingleDb db = SingleDb.open(dir, config("eager"))) {
      for (int i = 0; i < KEYS; i++) {
        db.put(key(i), value(i));
      }
      db.db().compactAll();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".sst"))
          .findFirst()
          .orElseThrow(() -> new AssertionError("no table"));
    }
  }

  /**
   * Block-cache lookups per point read: only the data block when metadata is kept decoded (eager,
   * lazy); top-level index, filter, index partition and data block when it is off. Counted over
   * fewer gets than the window (256 probes) after which a bottom-level bloom filter that ruled
   * nothing out stops being probed ({@code sst.FilterUse}); the other gets only check values.
   */
  @ParameterizedTest
  @CsvSource({"eager, 1", "lazy, 1", "off, 4", "EAGER, 1", "Off, 4"})
  void metadataOutsideTheCacheUnlessOff(String mode, int lookupsPerGet) throws IOException {
    build();
    try (SingleDb db = SingleDb.open(dir, config(mode))) {
      assertEquals(MetadataCacheMode.parse("m", mode), db.db().config().metadataCacheMode());
      int counted = 200;
      for (int i = 0; i < counted; i++) {
        assertArrayEquals(value(i), db.get(key(i)), "key " + i);
      }
      DbMetrics m = db.metrics();
      assertEquals((long) counted * lookupsPerGet, m.cacheHits() + m.cacheMisses(), m.toString());
      for (int i = counted; i < KEYS; i++) {
        assertArrayEquals(value(i), db.get(key(i)), "key " + i);
      }
    }
  }

  /**
   * A tree whose only table is one level-0 file has that file as its bottom: once its bloom filter
   * has ruled out nothing for a window of gets, gets of held keys skip it (three block-cache
   * lookups per get with metadata off instead of four, plus one probe in sixteen), and still
   * answer.
   */
  @Test
  void theOnlyLevel0FileIsTheBottomWhoseFilterGetsSkip() throws IOException {
    try (SingleDb db = SingleDb.open(dir, config("eager"))) {
      for (int i = 0; i < KEYS; i++) {
        db.put(key(i), value(i));
      }
      db.flush();
    }
    try (SingleDb db = SingleDb.open(dir, config("off"))) {
      assertEquals(1, db.metrics().filesPerLevel()[0], db.metrics().toString());
      for (int i = 0; i < 1000; i++) {
        assertArrayEquals(value(i), db.get(key(i)), "key " + i);
      }
      DbMetrics before = db.metrics();
      int counted = 320;
      for (int i = 1000; i < 1000 + counted; i++) {
        assertArrayEquals(value(i), db.get(key(i)), "key " + i);
      }
      DbMetrics after = db.metrics();
      long lookups =
          after.cacheHits() + after.cacheMisses() - before.cacheHits() - before.cacheMisses();
      assertTrue(
          lookups <= 3L * counted + counted / 16 + 2, "lookups over " + counted + ": " + lookups);
      assertEquals(1, after.filesPerLevel()[0], "level 0 kept its file: " + after);
    }
  }

  /**
   * A damaged filter block fails an eager open, while a lazy open reads no filter until the first
   * point read, which then fails naming the file.
   */
  @Test
  void lazyDecodesOnTheFirstPointRead() throws IOException {
    Path table = build();
    long size = table.toFile().length();
    Footer footer = Footer.decode(FileDamage.read(table, size - Footer.SIZE, Footer.SIZE));
    BlockHandle top = footer.topIndex();
    BlockIterator it = new Block(FileDamage.read(table, top.offset(), top.size())).iterator();
    it.seekToFirst();
    ByteReader r = new ByteReader(it.value());
    r.readVarInt();
    BlockHandle.decode(r);
    BlockHandle filter = BlockHandle.decode(r);
    FileDamage.flip(table, filter.offset() + filter.size() / 2);
    String name = table.getFileName().toString();

    CorruptionException eager =
        assertThrows(CorruptionException.class, () -> SingleDb.open(dir, config("eager")));
    assertTrue(eager.getMessage().contains(name), eager.getMessage());
    try (SingleDb db = SingleDb.open(dir, config("lazy"))) {
      CorruptionException first = assertThrows(CorruptionException.class, () -> db.get(key(1)));
      assertTrue(first.getMessage().contains(name), first.getMessage());
    }
  }
}
