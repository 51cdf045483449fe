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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code Config.Builder.backgroundMetadata}: a Db opens its manifest's tables reading footers and
 * properties only; their pinned index and filter metadata is loaded after the open, in the
 * background, or by the first read that needs it, and reads racing that load are exact.
 */
class BackgroundMetadataTest {
  private static final int KEYS = 6000;

  @TempDir Path dir;

  private static Config config(boolean background) {
    return Config.builder()
        .set("sst.block-size", "1kb")
        .set("sst.pinned-metadata.max-level", 6)
        .backgroundMetadata(background)
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
    try (SingleDb db = SingleDb.open(dir, config(false))) {
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
   * A damaged filter partition fails an open that loads metadata, not one that leaves it to the
   * background; the first point read of the table then fails naming it.
   */
  @Test
  void openReadsNoIndexOrFilter() throws IOException {
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

    CorruptionException atOpen =
        assertThrows(CorruptionException.class, () -> SingleDb.open(dir, config(false)));
    assertTrue(atOpen.getMessage().contains(name), atOpen.getMessage());
    try (SingleDb db = SingleDb.open(dir, config(true))) {
      CorruptionException first = assertThrows(CorruptionException.class, () -> db.get(key(1)));
      assertTrue(first.getMessage().contains(name), first.getMessage());
    }
  }

  /**
   * Scans right after the open race the background load and are exact; once it is done, a scan
   * reads index partitions from the pinned metadata again, as after an open that loaded it: the
   * block cache sees its data blocks only. (Scans never load the metadata themselves.)
   */
  @Test
  void loadsTheMetadataInTheBackground() throws Exception {
    build();
    long pinnedScan;
    try (SingleDb db = SingleDb.open(dir, config(false))) {
      pinnedScan = scanLookups(db);
    }
    try (SingleDb db = SingleDb.open(dir, config(true))) {
      ExecutorService readers = Executors.newFixedThreadPool(2);
      try {
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
          done.add(readers.submit(() -> scanLookups(db)));
        }
        for (Future<?> f : done) {
          f.get();
        }
      } finally {
        readers.shutdown();
      }
      long lookups = scanLookups(db);
      for (int attempt = 0; attempt < 600 && lookups != pinnedScan; attempt++) {
        Thread.sleep(50);
        lookups = scanLookups(db);
      }
      assertEquals(pinnedScan, lookups, "block cache lookups of a full scan");
      for (int i = 0; i < KEYS; i++) {
        assertArrayEquals(value(i), db.get(key(i)), "key " + i);
      }
    }
  }

  /** Block cache lookups of one full scan, which also checks every row. */
  private static long scanLookups(SingleDb db) {
    DbMetrics before = db.metrics();
    int i = 0;
    try (SingleDb.Cursor c = db.scan(null, null)) {
      while (c.hasNext()) {
        assertArrayEquals(value(i), c.next().getValue(), "row " + i);
        i++;
      }
    }
    assertEquals(KEYS, i);
    DbMetrics after = db.metrics();
    return after.cacheHits() + after.cacheMisses() - before.cacheHits() - before.cacheMisses();
  }
}
