package io.cobble;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code sst.merge-family-compression} compresses the tables of families with a merge-operator
 * column per level, independently of {@code sst.compression} for the other families. Both families
 * get the same compressible bytes, so a table's size tells whether it was compressed.
 */
class MergeFamilyCompressionTest {
  private static final int KEYS = 2_000;

  @TempDir Path dir;

  @ParameterizedTest(name = "sst.compression={0} merge-family={1}")
  @CsvSource({
    "none, lz4, false, true, false, true",
    "lz4, none, true, false, true, false",
    "none, same, false, false, false, false",
    "lz4, same, true, true, true, true",
    "none, 'none,lz4', false, false, false, true",
  })
  void eachFamilyIsCompressedAsItsOptionSaysAtEachLevel(
      String compression,
      String mergeCompression,
      boolean plainL0Compressed,
      boolean listsL0Compressed,
      boolean plainDeepCompressed,
      boolean listsDeepCompressed) {
    Config config =
        Config.builder()
            .set("total-buckets", 1)
            .set("sst.compression", compression)
            .set("sst.merge-family-compression", mergeCompression)
            .set("value-separation.threshold", "0")
            .set("fsync.enabled", false)
            .build();
    try (Db db = Db.open(dir, config)) {
      db.createFamily("plain", Collections.singletonList(new ColumnSpec("v", null, null)));
      db.createFamily(
          "lists",
          Collections.singletonList(
              new ColumnSpec("l", "list_append:max=0,retain=last,element_ttl=false", null)));
      for (int k = 0; k < KEYS; k++) {
        db.put(0, "plain", key(k), 0, list(k));
        db.merge(0, "lists", key(k), 0, list(k));
      }
      db.flush();
      assertCompressed(db, "plain", 0, plainL0Compressed);
      assertCompressed(db, "lists", 0, listsL0Compressed);

      // A second table over the whole key range, so compaction rewrites rather than moves.
      for (int k : new int[] {0, KEYS - 1}) {
        db.put(0, "plain", key(k), 0, list(k));
        db.merge(0, "lists", key(k), 0, list(k));
      }
      db.flush();
      db.compactAll();
      assertCompressed(db, "plain", 1, plainDeepCompressed);
      assertCompressed(db, "lists", 1, listsDeepCompressed);
      for (int k = 0; k < KEYS; k++) {
        boolean twice = k == 0 || k == KEYS - 1;
        byte[] list = twice ? concat(list(k), list(k)) : list(k);
        assertArrayEquals(list(k), db.getColumn(0, "plain", key(k), 0), "plain " + k);
        assertArrayEquals(list, db.getColumn(0, "lists", key(k), 0), "lists " + k);
      }
    }
  }

  /**
   * The family's tables, all of them at {@code fromLevel} or deeper, are compressed (less than half
   * the raw bytes: the values compress about 10-fold) or not (at least the raw bytes).
   */
  private static void assertCompressed(Db db, String family, int fromLevel, boolean compressed) {
    int id = db.schema().family(family).id();
    long bytes = 0;
    for (Tree t : db.versionSet().current().trees()) {
      for (int level = 0; level < t.levelCount(); level++) {
        for (FileMeta f : t.level(level)) {
          if (f.family() == id) {
            assertTrue(level >= fromLevel, family + " has a table at L" + level);
            bytes += f.size();
          }
        }
      }
    }
    long raw = (long) KEYS * list(0).length;
    String sizes = family + ": " + bytes + " bytes of tables for " + raw + " bytes of values";
    assertTrue(bytes > 0, sizes);
    assertEquals(compressed, bytes < raw / 2, sizes);
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static byte[] key(int k) {
    return String.format("key-%06d", k).getBytes(StandardCharsets.UTF_8);
  }

  /** Ten 40-byte elements of one repeated byte (list format: varint length, bytes): 410 bytes. */
  private static byte[] list(int k) {
    byte[] out = new byte[10 * 41];
    for (int i = 0; i < 10; i++) {
      out[i * 41] = 40;
      Arrays.fill(out, i * 41 + 1, i * 41 + 41, (byte) ('a' + (k + i) % 26));
    }
    return out;
  }
}
