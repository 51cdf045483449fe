package io.cobble;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * List-append columns the way the state backend uses them (one list column per family, lists grown
 * by batches of appends over many flushes and compactions, replaced by puts, cleared by deletes,
 * elements with their own expiry) against a model that is a plain list of elements per key. The
 * model encodes and decodes the list format itself and never calls the production operators. Seed:
 * the parameter.
 */
class ListAppendModelTest {
  private static final int KEYS = 200;
  private static final int OPS = 12_000;

  @TempDir Path dir;

  /** An element as the model keeps it: its bytes and its expiry (0: never). */
  private static final class Element {
    final byte[] bytes;
    final long expiry;

    Element(byte[] bytes, long expiry) {
      this.bytes = bytes;
      this.expiry = expiry;
    }
  }

  @ParameterizedTest(name = "seed {0} element ttl {1} separate merges {2} memtable {3}")
  @CsvSource({
    "1, false, false, vec",
    "2, true, false, skiplist",
    "3, false, true, hash",
    "4, true, true, adaptive",
    "5, false, false, adaptive"
  })
  void listsThroughFlushesAndCompactionsMatchTheModel(
      long seed, boolean elementTtl, boolean separateMerges, String memtable) {
    Random rnd = new Random(seed);
    ManualClock clock = new ManualClock(1_000_000);
    Config config =
        Config.builder()
            .set("total-buckets", 2)
            .set("memtable.type", memtable)
            .set("memtable.capacity", "16kb")
            .set("compaction.l0-file-limit", 2)
            .set("compaction.level-base-size", "32kb")
            .set("compaction.level-size-multiplier", 4)
            .set("compaction.max-levels", 4)
            .set("sst.target-file-size", "32kb")
            .set("sst.block-size", "1kb")
            .set("value-separation.threshold", "200")
            .set("value-separation.merge-families", separateMerges)
            .set("sst.merge-family-compression", seed % 2 == 0 ? "lz4" : "same")
            .set("fsync.enabled", false)
            .clock(clock)
            .build();
    String operator = "list_append:max=0,retain=last,element_ttl=" + elementTtl;
    Map<Integer, List<Element>> model = new HashMap<>();
    Db db = Db.open(dir, config);
    int op = 0;
    long flushes = 0;
    long compactions = 0;
    try {
      db.createFamily("lists", java.util.Arrays.asList(new ColumnSpec("l", operator, null)));
      for (op = 0; op < OPS; op++) {
        int k = rnd.nextInt(KEYS);
        int dice = rnd.nextInt(1000);
        // Only element-TTL lists get expiring writes: a whole-value expiry is another rule.
        long ttl = elementTtl && rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(5_000) : 0;
        long expiry = ttl == 0 ? 0 : clock.nowMillis() + ttl;
        if (dice < 700) {
          List<byte[]> batch = randomElements(rnd, 1 + rnd.nextInt(rnd.nextBoolean() ? 3 : 40));
          db.merge(k % 2, "lists", key(k), 0, encode(batch), ttl);
          List<Element> list = model.computeIfAbsent(k, x -> new ArrayList<>());
          for (byte[] e : batch) {
            list.add(new Element(e, expiry));
          }
        } else if (dice < 740) {
          List<byte[]> batch = randomElements(rnd, 1 + rnd.nextInt(20));
          db.put(k % 2, "lists", key(k), 0, encode(batch), ttl);
          List<Element> list = new ArrayList<>();
          for (byte[] e : batch) {
            list.add(new Element(e, expiry));
          }
          model.put(k, list);
        } else if (dice < 770) {
          db.deleteRow(k % 2, "lists", key(k));
          model.remove(k);
        } else if (dice < 950) {
          check(db, model, k, clock.nowMillis(), "op " + op);
        } else if (dice < 965) {
          clock.advance(rnd.nextInt(2_000));
        } else if (dice < 985) {
          db.flush();
        } else if (dice < 995) {
          db.compactAll();
        } else if (dice < 998) {
          db.waitForCompactions();
        } else {
          flushes += db.metrics().flushes();
          compactions += db.metrics().compactions();
          db.close();
          db = Db.open(dir, config);
        }
      }
      db.compactAll();
      for (int k = 0; k < KEYS; k++) {
        check(db, model, k, clock.nowMillis(), "after the final compaction");
      }
      flushes += db.metrics().flushes();
      compactions += db.metrics().compactions();
      assertTrue(
          flushes > 50 && compactions > 20, flushes + " flushes, " + compactions + " compactions");
    } catch (AssertionError | RuntimeException e) {
      throw new AssertionError("seed " + seed + " op " + op + ": " + e.getMessage(), e);
    } finally {
      db.close();
    }
  }

  private static void check(Db db, Map<Integer, List<Element>> model, int k, long now, String at) {
    List<byte[]> expected = new ArrayList<>();
    for (Element e : model.getOrDefault(k, new ArrayList<>())) {
      if (e.expiry == 0 || e.expiry > now) {
        expected.add(e.bytes);
      }
    }
    byte[][] row = db.get(k % 2, "lists", key(k));
    if (expected.isEmpty()) {
      assertNull(row == null ? null : row[0], at + ": key " + k + " has no live element");
      return;
    }
    assertEquals(render(expected), render(decode(row[0])), at + ": key " + k);
  }

  private static byte[] key(int k) {
    return ("list-" + k).getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  private static List<byte[]> randomElements(Random rnd, int n) {
    List<byte[]> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      byte[] e = new byte[rnd.nextInt(4) == 0 ? rnd.nextInt(200) : 8];
      rnd.nextBytes(e);
      out.add(e);
    }
    return out;
  }

  /** The list format, written here rather than by the codec under test: varint length, bytes. */
  private static byte[] encode(List<byte[]> elements) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] e : elements) {
      int n = e.length;
      while (n >= 0x80) {
        out.write((n & 0x7F) | 0x80);
        n >>>= 7;
      }
      out.write(n);
      out.write(e, 0, e.length);
    }
    return out.toByteArray();
  }

  private static List<byte[]> decode(byte[] list) {
    List<byte[]> out = new ArrayList<>();
    int pos = 0;
    while (pos < list.length) {
      int n = 0;
      int shift = 0;
      int b;
      do {
        b = list[pos++] & 0xFF;
        n |= (b & 0x7F) << shift;
        shift += 7;
      } while (b >= 0x80);
      out.add(java.util.Arrays.copyOfRange(list, pos, pos + n));
      pos += n;
    }
    return out;
  }

  private static String render(List<byte[]> elements) {
    StringBuilder s = new StringBuilder();
    for (byte[] e : elements) {
      s.append(java.util.Arrays.toString(e)).append('\n');
    }
    return s.toString();
  }
}
