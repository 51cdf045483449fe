package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The compaction filter hook: values it calls dead are gone after a compaction into the bottom
 * level (also values separated into the value log, which it sees loaded), live ones and other
 * families are kept, and without a filter nothing is dropped.
 */
class CompactionFilterTest {
  private static final int KEYS = 200;

  @TempDir Path dir;

  @Test
  void deadValuesAreDroppedAtTheBottomAndEverythingElseIsKept() {
    List<String> families = new ArrayList<>();
    try (Db db = Db.open(dir, Config.builder().set("memtable.capacity", "64kb").build())) {
      db.createFamily("f", Collections.singletonList(ColumnSpec.of("v")));
      db.createFamily("g", Collections.singletonList(ColumnSpec.of("v")));
      writeHalves(db);
      db.compactAll();
      db.waitForCompactions();
      assertEquals(KEYS, rows(db, "f"), "no filter: every row kept");

      db.setCompactionFilter(
          family -> {
            families.add(family);
            return "f".equals(family) ? (position, value) -> value[0] == 'd' : null;
          });
      // New files over the same keys, so the next compaction merges instead of moving a file.
      for (int k = 0; k < KEYS; k += 7) {
        db.put(0, "f", key(k), 0, value(k, k % 2 == 0));
        db.put(0, "g", key(k), 0, value(k, true));
      }
      db.compactAll();
      db.waitForCompactions();
      assertTrue(families.containsAll(Arrays.asList("f", "g")), "asked per family: " + families);
      for (int k = 0; k < KEYS; k++) {
        byte[][] row = db.get(0, "f", key(k));
        if (k % 2 == 0) {
          assertNull(row, "dead value of key " + k);
        } else {
          assertNotNull(row, "live value of key " + k);
          assertEquals(new String(value(k, false), UTF_8), new String(row[0], UTF_8));
        }
      }
      assertEquals(KEYS / 2, rows(db, "f"), "dead rows physically gone");
      assertEquals(KEYS, rows(db, "g"), "a family without a filter keeps every row");
    }
  }

  /** Keys 0..199 of both families; even keys dead; every tenth value goes to the value log. */
  private static void writeHalves(Db db) {
    for (int k = 0; k < KEYS; k++) {
      db.put(0, "f", key(k), 0, value(k, k % 2 == 0));
      db.put(0, "g", key(k), 0, value(k, true));
      if (k == KEYS / 2) {
        db.flush();
      }
    }
    db.flush();
  }

  private static byte[] key(int k) {
    return String.format("key-%05d", k).getBytes(UTF_8);
  }

  private static byte[] value(int k, boolean dead) {
    String text = (dead ? "dead-" : "live-") + k;
    if (k % 10 == 1 || k % 10 == 0) {
      StringBuilder big = new StringBuilder(text);
      while (big.length() < 3000) {
        big.append('.');
      }
      text = big.toString();
    }
    return text.getBytes(UTF_8);
  }

  private static int rows(Db db, String family) {
    int n = 0;
    try (ScanCursor c = db.scan(0, family, null, null, ScanOptions.defaults())) {
      while (c.hasNext()) {
        c.next();
        n++;
      }
    }
    return n;
  }
}
