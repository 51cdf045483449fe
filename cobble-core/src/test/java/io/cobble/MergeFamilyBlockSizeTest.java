package io.cobble;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sst.merge-family-block-size} sets the data block size of families with a merge-operator
 * column only. Every key holds the same incompressible list, so an LZ4 block compresses only
 * against the repeats it holds: the larger the block, the smaller the table. The other family's
 * tables do not change, and both read back.
 */
class MergeFamilyBlockSizeTest {
  private static final int KEYS = 2_000;

  /** One 400-byte element of random bytes (list format: varint length, bytes), for every key. */
  private static final byte[] LIST = list();

  @TempDir Path dir;

  @Test
  void onlyMergeFamiliesGetTheirBlockSize() {
    long[] same = tableBytes("same", dir.resolve("same"));
    long[] large = tableBytes("64kb", dir.resolve("large"));
    String sizes =
        "plain "
            + same[0]
            + " / "
            + large[0]
            + " bytes, lists "
            + same[1]
            + " / "
            + large[1]
            + " bytes";
    assertEquals(same[0], large[0], sizes);
    assertTrue(large[1] < same[1] / 2, sizes);
  }

  /** The table bytes of the plain and the list family, written with the option at {@code size}. */
  private static long[] tableBytes(String size, Path path) {
    Config config =
        Config.builder()
            .set("total-buckets", 1)
            .set("sst.compression", "lz4")
            .set("sst.merge-family-block-size", size)
            .set("value-separation.threshold", "0")
            .set("fsync.enabled", false)
            .build();
    try (Db db = Db.open(path, config)) {
      db.createFamily("plain", Collections.singletonList(new ColumnSpec("v", null, null)));
      db.createFamily(
          "lists",
          Collections.singletonList(
              new ColumnSpec("l", "list_append:max=0,retain=last,element_ttl=false", null)));
      for (int k = 0; k < KEYS; k++) {
        db.put(0, "plain", key(k), 0, LIST);
        db.merge(0, "lists", key(k), 0, LIST);
      }
      db.flush();
      for (int k = 0; k < KEYS; k++) {
        assertArrayEquals(LIST, db.getColumn(0, "plain", key(k), 0), "plain " + k);
        assertArrayEquals(LIST, db.getColumn(0, "lists", key(k), 0), "lists " + k);
      }
      return new long[] {bytes(db, "plain"), bytes(db, "lists")};
    }
  }

  private static long bytes(Db db, String family) {
    int id = db.schema().family(family).id();
    long bytes = 0;
    for (Tree t : db.versionSet().current().trees()) {
      for (int level = 0; level < t.levelCount(); level++) {
        for (FileMeta f : t.level(level)) {
          if (f.family() == id) {
            bytes += f.size();
          }
        }
      }
    }
    return bytes;
  }

  private static byte[] key(int k) {
    return String.format("key-%06d", k).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] list() {
    byte[] out = new byte[402];
    out[0] = (byte) (400 & 0x7F | 0x80);
    out[1] = (byte) (400 >>> 7);
    byte[] element = new byte[400];
    new Random(7).nextBytes(element);
    System.arraycopy(element, 0, out, 2, 400);
    return out;
  }
}
