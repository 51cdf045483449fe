package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Merges split into key ranges ({@code compaction.subcompactions}) run on several threads and leave
 * exactly the rows of a merge in one thread: puts, deletes and list appends over many L1 files,
 * checked against a model after every round. A part that fails leaves nothing behind.
 */
class SubcompactionTest {
  private static final int KEYS = 3_000;
  private static final Base64.Encoder BASE64 = Base64.getEncoder();

  @TempDir Path dir;

  private static Config config(int subcompactions) {
    return Config.builder()
        .set("total-buckets", 1)
        .set("memtable.capacity", "64kb")
        .set("sst.block-size", "1kb")
        .set("sst.target-file-size", "16kb")
        .set("sst.compression", "lz4")
        // Only the manual merges below run, the same ones in both Dbs.
        .set("compaction.l0-file-limit", 1000)
        .set("compaction.threads", 4)
        .set("compaction.subcompactions", subcompactions)
        .set("value-separation.threshold", "0")
        .set("fsync.enabled", false)
        .build();
  }

  private static void createFamilies(Db db) {
    db.createFamily("plain", Collections.singletonList(ColumnSpec.of("v")));
    db.createFamily(
        "lists",
        Collections.singletonList(
            new ColumnSpec("l", "list_append:max=0,retain=last,element_ttl=false", null)));
  }

  @Test
  void splitMergesLeaveTheRowsOfOneThread() {
    Map<String, AtomicInteger> parts = new ConcurrentHashMap<>();
    Set<String> threads = ConcurrentHashMap.newKeySet();
    TreeMap<String, byte[]> plain = new TreeMap<>();
    TreeMap<String, ByteArrayOutputStream> lists = new TreeMap<>();
    try (Db split = Db.open(dir.resolve("split"), config(4));
        Db single = Db.open(dir.resolve("single"), config(1))) {
      for (Db db : new Db[] {split, single}) {
        createFamilies(db);
        String name = db == split ? "split" : "single";
        parts.put(name, new AtomicInteger());
        db.setCompactionFilter(
            family -> {
              parts.get(name).incrementAndGet();
              if (db == split) {
                threads.add(Thread.currentThread().getName());
              }
              return null;
            });
      }
      Random random = new Random(42);
      for (int round = 0; round < 6; round++) {
        for (int op = 0; op < 4_000; op++) {
          int k = random.nextInt(KEYS);
          String key = String.format("key-%06d", k);
          int dice = random.nextInt(10);
          if (dice < 4) {
            byte[] value =
                ("v" + round + "-" + op + "-" + "x".repeat(random.nextInt(60))).getBytes(UTF_8);
            plain.put(key, value);
            split.put(0, "plain", key.getBytes(UTF_8), 0, value);
            single.put(0, "plain", key.getBytes(UTF_8), 0, value);
          } else if (dice < 5) {
            plain.remove(key);
            split.delete(0, "plain", key.getBytes(UTF_8), 0);
            single.delete(0, "plain", key.getBytes(UTF_8), 0);
          } else if (dice < 9) {
            byte[] element = element(round, op);
            lists
                .computeIfAbsent(key, x -> new ByteArrayOutputStream())
                .write(element, 0, element.length);
            split.merge(0, "lists", key.getBytes(UTF_8), 0, element);
            single.merge(0, "lists", key.getBytes(UTF_8), 0, element);
          } else {
            lists.remove(key);
            split.delete(0, "lists", key.getBytes(UTF_8), 0);
            single.delete(0, "lists", key.getBytes(UTF_8), 0);
          }
        }
        split.compactAll();
        single.compactAll();
        for (Db db : new Db[] {split, single}) {
          String which = (db == split ? "split" : "single") + ", round " + round;
          assertEquals(encoded(plain), read(db, "plain"), which);
          TreeMap<String, byte[]> expectedLists = new TreeMap<>();
          lists.forEach((k, v) -> expectedLists.put(k, v.toByteArray()));
          assertEquals(encoded(expectedLists), read(db, "lists"), which);
          assertSortedAndDisjoint(db, which);
        }
      }
      assertTrue(
          parts.get("split").get() > parts.get("single").get(),
          "merges ran in more parts than merges: " + parts);
      assertTrue(
          threads.stream().anyMatch(t -> t.startsWith("cobble-compaction")),
          "parts ran on the compaction pool: " + threads);
    }
  }

  @Test
  void aFailingPartLeavesNoFilesAndNoChange() throws IOException {
    Path path = dir.resolve("failing");
    try (Db db = Db.open(path, config(4))) {
      createFamilies(db);
      for (int k = 0; k < KEYS; k++) {
        db.put(0, "plain", key(k), 0, filler("a" + k + ":"));
      }
      db.compactAll();
      assertTrue(files(db, "plain") >= 8, "L1 spans several files: " + describe(db));
      for (int k = 0; k < KEYS; k++) {
        db.put(0, "plain", key(k), 0, filler("b" + k + ":"));
      }
      // The last part fails near its end; the others have written whole files by then.
      byte[] poison = "b2900:".getBytes(UTF_8);
      db.setCompactionFilter(
          family ->
              (position, value) -> {
                if (Arrays.equals(value, 0, poison.length, poison, 0, poison.length)) {
                  throw new IllegalStateException("poisoned value");
                }
                return false;
              });
      IllegalStateException thrown = assertThrows(IllegalStateException.class, db::compactAll);
      assertEquals("poisoned value", thrown.getMessage());
      assertEquals(live(db), onDisk(path), "no output of the failed merge is left");
      for (int k = 0; k < KEYS; k += 97) {
        assertArrayEquals(filler("b" + k + ":"), db.getColumn(0, "plain", key(k), 0));
      }
      db.setCompactionFilter(null);
      db.compactAll();
      for (int k = 0; k < KEYS; k += 97) {
        assertArrayEquals(filler("b" + k + ":"), db.getColumn(0, "plain", key(k), 0));
      }
    }
  }

  private static byte[] key(int k) {
    return String.format("key-%06d", k).getBytes(UTF_8);
  }

  /** {@code text}, then 100 bytes that do not compress, so that L1 spans many files. */
  private static byte[] filler(String text) {
    byte[] out = new byte[text.length() + 100];
    new Random(text.hashCode()).nextBytes(out);
    System.arraycopy(text.getBytes(UTF_8), 0, out, 0, text.length());
    return out;
  }

  /** One list element: varint length, then the bytes. */
  private static byte[] element(int round, int op) {
    byte[] text = ("e" + round + "." + op).getBytes(UTF_8);
    byte[] out = new byte[text.length + 1];
    out[0] = (byte) text.length;
    System.arraycopy(text, 0, out, 1, text.length);
    return out;
  }

  /** The family's rows, values in Base64 so that maps compare them by content. */
  private static TreeMap<String, String> read(Db db, String family) {
    TreeMap<String, String> rows = new TreeMap<>();
    try (ScanCursor c = db.scan(0, family, null, null, ScanOptions.defaults())) {
      while (c.hasNext()) {
        Row row = c.next();
        rows.put(new String(row.key(), UTF_8), BASE64.encodeToString(row.column(0)));
      }
    }
    return rows;
  }

  private static TreeMap<String, String> encoded(Map<String, byte[]> model) {
    TreeMap<String, String> rows = new TreeMap<>();
    model.forEach((k, v) -> rows.put(k, BASE64.encodeToString(v)));
    return rows;
  }

  /** L1 and below hold files in key order that share no key, as the version's reads assume. */
  private static void assertSortedAndDisjoint(Db db, String which) {
    for (Tree t : db.versionSet().current().trees()) {
      for (int level = 1; level < t.levelCount(); level++) {
        FileMeta previous = null;
        for (FileMeta f : t.level(level)) {
          if (previous != null) {
            assertTrue(
                io.cobble.util.Bytes.compare(previous.largest(), f.smallest()) < 0,
                which + ": L" + level + " files " + previous + " and " + f + " overlap");
          }
          previous = f;
        }
      }
    }
  }

  private static String describe(Db db) {
    StringBuilder b = new StringBuilder();
    for (Tree t : db.versionSet().current().trees()) {
      for (int level = 0; level < t.levelCount(); level++) {
        for (FileMeta f : t.level(level)) {
          b.append(" L").append(level).append(":").append(f.family()).append(":").append(f.size());
        }
      }
    }
    return b.toString();
  }

  private static int files(Db db, String family) {
    int id = db.schema().family(family).id();
    int n = 0;
    for (Tree t : db.versionSet().current().trees()) {
      for (int level = 0; level < t.levelCount(); level++) {
        for (FileMeta f : t.level(level)) {
          n += f.family() == id ? 1 : 0;
        }
      }
    }
    return n;
  }

  private static Set<String> live(Db db) {
    Set<String> names = new TreeSet<>();
    for (Tree t : db.versionSet().current().trees()) {
      for (int level = 0; level < t.levelCount(); level++) {
        for (FileMeta f : t.level(level)) {
          names.add(db.versionSet().tablePath(f.number()).getFileName().toString());
        }
      }
    }
    return names;
  }

  private static Set<String> onDisk(Path path) throws IOException {
    try (Stream<Path> s = Files.list(path)) {
      return s.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".sst"))
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }
}
