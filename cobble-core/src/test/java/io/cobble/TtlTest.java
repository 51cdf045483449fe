package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.merge.ListCodec;
import io.cobble.merge.U64AddOperator;
import io.cobble.schema.ColumnSpec;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TtlTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private Config config(ManualClock clock) {
    return Config.builder()
        .set("memtable.capacity", "16kb")
        .set("ttl.default", "10s")
        .set("compaction.l0-file-limit", 2)
        .clock(clock)
        .build();
  }

  @Test
  void valuesExpireWithExplicitAndDefaultTtl() {
    ManualClock clock = new ManualClock(1000);
    try (SingleDb db = SingleDb.open(dir, config(clock))) {
      db.put(b("explicit"), b("1"), 2000);
      db.put(b("default"), b("2"));
      db.put(b("forever"), b("3"), WriteBatch.NO_TTL);
      clock.advance(1999);
      assertArrayEquals(b("1"), db.get(b("explicit")));
      clock.advance(1);
      assertNull(db.get(b("explicit")));
      assertArrayEquals(b("2"), db.get(b("default")));
      db.flush();
      clock.advance(8000);
      assertNull(db.get(b("default")));
      assertArrayEquals(b("3"), db.get(b("forever")));
    }
  }

  @Test
  void mergeOntoExpiredValueStartsFreshAtAnyLevel() {
    ManualClock clock = new ManualClock(0);
    try (Db db = Db.open(dir, config(clock))) {
      db.createFamily("c", Arrays.asList(ColumnSpec.merging("n", "u64_add")));
      byte[] k = b("k");
      db.merge(0, "c", k, 0, U64AddOperator.encode(5), 100);
      db.flush();
      clock.advance(150);
      // The base expired before this merge was written, so it must not count.
      db.merge(0, "c", k, 0, U64AddOperator.encode(1), 0);
      assertEquals(1, U64AddOperator.decode(db.get(0, "c", k)[0]));
      db.compactAll();
      assertEquals(1, U64AddOperator.decode(db.get(0, "c", k)[0]));
      byte[] k2 = b("k2");
      db.merge(0, "c", k2, 0, U64AddOperator.encode(5), 100);
      db.flush();
      clock.advance(50);
      // Written while the base was alive: the sum survives the base's later expiry.
      db.merge(0, "c", k2, 0, U64AddOperator.encode(1), 0);
      clock.advance(100);
      db.compactAll();
      assertEquals(6, U64AddOperator.decode(db.get(0, "c", k2)[0]));
    }
  }

  @Test
  void fullyExpiredFilesAreDroppedWithoutRewriting() {
    ManualClock clock = new ManualClock(0);
    try (SingleDb db = SingleDb.open(dir, config(clock))) {
      for (int i = 0; i < 200; i++) {
        db.put(b("old" + i), new byte[100], 1000);
      }
      db.db().compactAll();
      assertTrue(db.metrics().liveFiles() > 0);
      clock.advance(1001);
      db.put(b("new"), b("x"), WriteBatch.NO_TTL);
      db.flush();
      db.db().compactAll();
      db.db().waitForCompactions();
      DbMetrics m = db.metrics();
      assertTrue(m.expiredFileDrops() > 0, m.toString());
      assertNull(db.get(b("old5")));
      assertArrayEquals(b("x"), db.get(b("new")));
    }
  }

  @Test
  void listElementsExpireIndividually() {
    ManualClock clock = new ManualClock(0);
    try (Db db = Db.open(dir, config(clock))) {
      db.createFamily(
          "l", Arrays.asList(ColumnSpec.merging("events", "list_append:element_ttl=true")));
      byte[] k = b("k");
      db.merge(0, "l", k, 0, ListCodec.element(b("a")), 100);
      db.merge(0, "l", k, 0, ListCodec.element(b("b")), 300);
      db.flush();
      db.merge(0, "l", k, 0, ListCodec.element(b("c")), 200);
      clock.advance(150);
      List<byte[]> live = ListCodec.decode(db.get(0, "l", k)[0]);
      assertEquals(2, live.size());
      assertArrayEquals(b("b"), live.get(0));
      assertArrayEquals(b("c"), live.get(1));
      clock.advance(200);
      assertNull(db.get(0, "l", k));
    }
  }
}
