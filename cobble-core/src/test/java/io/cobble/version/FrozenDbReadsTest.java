package io.cobble.version;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.ManualClock;
import io.cobble.schema.ColumnSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#freeze()}: point reads of a Db that nothing changes any more use its version without a
 * reference, still answer from tables and from a memtable holding entries, and the version cannot
 * change afterwards (which is what makes reading it without a reference safe).
 */
class FrozenDbReadsTest {
  private static final String FAMILY = "f";

  @TempDir Path dir;

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private Db open() {
    Db db = Db.open(dir, Config.builder().set("memtable.type", "adaptive").build());
    db.createFamily(FAMILY, List.of(ColumnSpec.of("v")));
    for (int i = 0; i < 100; i++) {
      db.put(0, FAMILY, bytes("k" + i), 0, bytes("v" + i));
    }
    db.flush();
    return db;
  }

  /** The version's references while a read of {@code key} is in progress (inside its sink). */
  private static int refsDuringRead(Db db, byte[] key) {
    Version v = db.versionSet().current();
    int[] seen = {-1};
    assertTrue(
        db.readColumns(
            0,
            FAMILY,
            key,
            new int[] {0},
            (index, buf, off, len) -> {
              seen[0] = v.refCount();
            }));
    return seen[0];
  }

  @Test
  void readsOfAFrozenDbTakeNoReferenceOnItsVersion() {
    try (Db db = open()) {
      int idle = db.versionSet().current().refCount();
      assertEquals(idle + 1, refsDuringRead(db, bytes("k7")), "a read pins the version");
      db.freeze();
      assertEquals(idle, refsDuringRead(db, bytes("k7")), "a frozen Db's read does not");
      assertEquals(idle, db.versionSet().current().refCount());
    }
  }

  @Test
  void aFrozenDbAnswersFromItsTablesAndFromAMemtableHoldingEntries() {
    try (Db db = open()) {
      db.put(0, FAMILY, bytes("k3"), 0, bytes("newer"));
      db.put(0, FAMILY, bytes("only-in-memtable"), 0, bytes("m"));
      db.freeze();
      assertArrayEquals(bytes("newer"), db.get(0, FAMILY, bytes("k3"))[0]);
      assertArrayEquals(bytes("m"), db.get(0, FAMILY, bytes("only-in-memtable"))[0]);
      assertArrayEquals(bytes("v42"), db.get(0, FAMILY, bytes("k42"))[0]);
      assertNull(db.get(0, FAMILY, bytes("absent")));
      assertFalse(db.readColumns(0, FAMILY, bytes("absent"), new int[] {0}, (i, b, o, l) -> {}));
    }
  }

  /**
   * A frozen Db starts no compaction: a table whose rows all expired after the freeze would
   * otherwise be dropped by one, whose version change fails and fails the Db's background work.
   */
  @Test
  void aFrozenDbStartsNoCompaction() {
    ManualClock clock = new ManualClock(1_000_000);
    try (Db db = Db.open(dir, Config.builder().clock(clock).build())) {
      db.createFamily(FAMILY, List.of(ColumnSpec.of("v")));
      for (int i = 0; i < 100; i++) {
        db.put(0, FAMILY, bytes("t" + i), 0, bytes("v" + i), 1_000);
      }
      db.flush();
      db.waitForCompactions();
      assertEquals(1, db.metrics().liveFiles());
      db.freeze();
      clock.advance(10_000);
      db.waitForCompactions();
      assertEquals(0, db.metrics().expiredFileDrops());
      assertEquals(1, db.metrics().liveFiles());
      assertNull(db.get(0, FAMILY, bytes("t1")), "expired rows are not read");
    }
  }

  @Test
  void theVersionOfAFrozenDbCannotChange() {
    try (Db db = open()) {
      db.freeze();
      Version frozen = db.versionSet().current();
      db.put(0, FAMILY, bytes("late"), 0, bytes("x"));
      assertThrows(RuntimeException.class, db::flush);
      assertEquals(frozen, db.versionSet().current());
      assertArrayEquals(bytes("v1"), db.get(0, FAMILY, bytes("k1"))[0]);
    }
  }
}
