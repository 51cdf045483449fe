package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.cobble.schema.ColumnSpec;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SchemaEvolutionTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  @Test
  void addAndDropColumnsUpgradeOldFilesOnReadAndSurviveReopen() {
    Config config = Config.builder().set("memtable.capacity", "16kb").build();
    try (Db db = Db.open(dir, config)) {
      db.createFamily("p", Arrays.asList(ColumnSpec.of("a"), ColumnSpec.of("b")));
      db.put(0, "p", b("k1"), 0, b("a1"));
      db.put(0, "p", b("k1"), 1, b("b1"));
      db.flush();
      int before = db.schema().id();
      db.addColumn("p", new ColumnSpec("c", null, b("dflt")));
      assertEquals(before + 1, db.schema().id());
      byte[][] row = db.get(0, "p", b("k1"));
      assertEquals(3, row.length);
      assertArrayEquals(b("dflt"), row[2]);
      db.dropColumn("p", "a");
      row = db.get(0, "p", b("k1"));
      assertEquals(2, row.length);
      assertArrayEquals(b("b1"), row[0]);
      assertArrayEquals(b("dflt"), row[1]);
      db.put(0, "p", b("k2"), 0, b("b2"));
    }
    try (Db db = Db.open(dir, config)) {
      assertEquals(Arrays.asList("b", "c"), db.schema().family("p").columnNames());
      byte[][] row = db.get(0, "p", b("k1"));
      assertArrayEquals(b("b1"), row[0]);
      assertArrayEquals(b("dflt"), row[1]);
      db.addColumn("p", ColumnSpec.of("a"));
      // A re-added column gets a new id: the dropped column's old values do not come back.
      assertNull(db.get(0, "p", b("k1"))[2]);
      db.compactAll();
      assertArrayEquals(b("b2"), db.get(0, "p", b("k2"))[0]);
      db.dropColumn("p", "b");
      db.dropColumn("p", "a");
      // Only the default remains, which alone does not make a row exist.
      assertNull(db.get(0, "p", b("k2")));
    }
  }
}
