package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.sst.Block;
import io.cobble.sst.BlockHandle;
import io.cobble.sst.BlockIterator;
import io.cobble.sst.Footer;
import io.cobble.util.ByteReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Flips a byte in each kind of file region and checks that every read either returns the right data
 * or throws a {@link CorruptionException} naming the damaged file, and that the damage is detected
 * at all. Manifests, which fall back to the previous one, are covered by {@link
 * ManifestFallbackTest}.
 */
class CorruptionTest {
  private static final int KEYS = 3000;

  @TempDir Path base;

  private Config config(int pinnedLevel) {
    return Config.builder()
        .set("memtable.capacity", "64kb")
        .set("sst.block-size", "1kb")
        .set("sst.target-file-size", "64kb")
        .set("compaction.level-base-size", "128kb")
        .set("sst.pinned-metadata.max-level", pinnedLevel)
        .set("sst.compression", "lz4")
        .set("value-separation.threshold", "100")
        .build();
  }

  private static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(UTF_8);
  }

  private static byte[] value(int i) {
    byte[] v = new byte[i % 5 == 0 ? 300 : 30];
    Arrays.fill(v, (byte) (i * 31));
    v[0] = (byte) i;
    return v;
  }

  private Map<Integer, byte[]> build(Path dir, Config config) {
    Map<Integer, byte[]> expected = new TreeMap<>();
    try (SingleDb db = SingleDb.open(dir, config)) {
      for (int i = 0; i < KEYS; i++) {
        db.put(key(i), value(i));
        expected.put(i, value(i));
      }
      db.db().compactAll();
      for (int i = 0; i < KEYS; i += 10) {
        db.put(key(i), value(i));
      }
      db.flush();
      // Close abandons a running compaction; wait so the largest table is a live one.
      db.db().waitForCompactions();
    }
    return expected;
  }

  private static Path largest(Path dir, String suffix) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(suffix))
          .max(Comparator.comparingLong(p -> p.toFile().length()))
          .orElseThrow(() -> new AssertionError("no " + suffix + " file"));
    }
  }

  /** Returns the file to damage and the offset of a byte in the requested region. */
  private static Object[] target(Path dir, String kind) throws IOException {
    if (kind.equals("vlog")) {
      return new Object[] {largest(dir, ".vlog"), 12L + 4 + 5};
    }
    Path sst = largest(dir, ".sst");
    long size = sst.toFile().length();
    Footer footer = Footer.decode(FileDamage.read(sst, size - Footer.SIZE, Footer.SIZE));
    BlockHandle top = footer.topIndex();
    Block topBlock = new Block(FileDamage.read(sst, top.offset(), top.size()));
    BlockIterator it = topBlock.iterator();
    it.seekToFirst();
    ByteReader r = new ByteReader(it.value());
    r.readVarInt();
    BlockHandle index = BlockHandle.decode(r);
    BlockHandle filter = BlockHandle.decode(r);
    switch (kind) {
      case "data":
        return new Object[] {sst, 7L};
      case "index":
        return new Object[] {sst, index.offset() + index.size() / 2};
      case "filter":
        return new Object[] {sst, filter.offset() + filter.size() / 2};
      case "properties":
        return new Object[] {sst, footer.properties().offset() + 3};
      case "top-index":
        return new Object[] {sst, top.offset() + top.size() / 2};
      default:
        return new Object[] {sst, size - 20};
    }
  }

  @ParameterizedTest(name = "{0} pinned-level {1}")
  @CsvSource({
    "data, -1",
    "data, 2",
    "index, -1",
    "index, 2",
    "filter, -1",
    "filter, 2",
    "top-index, -1",
    "properties, -1",
    "footer, -1",
    "vlog, -1"
  })
  void damagedFilesAreDetectedNeverReturned(String kind, int pinnedLevel) throws IOException {
    Path dir = base.resolve("db");
    Config config = config(pinnedLevel);
    Map<Integer, byte[]> expected = build(dir, config);
    Object[] t = target(dir, kind);
    Path file = (Path) t[0];
    FileDamage.flip(file, (Long) t[1]);
    String name = file.getFileName().toString();
    boolean detected = false;
    SingleDb db;
    try {
      db = SingleDb.open(dir, config);
    } catch (CorruptionException e) {
      assertTrue(e.getMessage().contains(name), e.getMessage());
      return;
    }
    try {
      for (Map.Entry<Integer, byte[]> e : expected.entrySet()) {
        try {
          byte[] v = db.get(key(e.getKey()));
          assertArrayEquals(e.getValue(), v, "key " + e.getKey() + " after damaging " + kind);
        } catch (CorruptionException ce) {
          assertTrue(ce.getMessage().contains(name), ce.getMessage());
          detected = true;
        }
      }
      try (SingleDb.Cursor c = db.scan(null, null)) {
        int i = 0;
        while (c.hasNext()) {
          Map.Entry<byte[], byte[]> e = c.next();
          assertArrayEquals(key(i), e.getKey());
          assertArrayEquals(expected.get(i), e.getValue());
          i++;
        }
      } catch (CorruptionException ce) {
        assertTrue(ce.getMessage().contains(name), ce.getMessage());
        detected = true;
      }
    } finally {
      db.close();
    }
    assertTrue(detected, "damage to " + kind + " in " + name + " went unnoticed");
  }
}
