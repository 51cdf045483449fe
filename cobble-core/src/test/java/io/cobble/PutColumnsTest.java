package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@link Db#putColumns}: a batch of one-column puts in packed buffers reads like single puts. */
class PutColumnsTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static Db open(Path dir, MemTableType type) {
    Db db =
        Db.open(
            dir,
            Config.builder()
                .set("memtable.type", type.name().toLowerCase())
                .set("memtable.capacity", "64kb")
                .build());
    db.createFamily("t", Arrays.asList(ColumnSpec.of("a"), ColumnSpec.of("b")));
    return db;
  }

  /**
   * Random batches (empty values, repeated keys within a batch, trailing garbage past the last end)
   * over few keys, mixed with single puts and deletes and flushed now and then: every key reads as
   * a map that applied the same writes in order, column b untouched.
   */
  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void batchesReadLikeSinglePutsInOrder(MemTableType type) {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    Random rnd = new Random(seed);
    Map<String, byte[]> model = new HashMap<>();
    try (Db db = open(dir, type)) {
      for (int round = 0; round < 200; round++) {
        int count = rnd.nextInt(40);
        ByteArrayOutputStream keys = new ByteArrayOutputStream();
        ByteArrayOutputStream values = new ByteArrayOutputStream();
        int[] keyEnds = new int[count + rnd.nextInt(3)];
        int[] valueEnds = new int[keyEnds.length];
        for (int i = 0; i < count; i++) {
          String k = "k" + rnd.nextInt(300);
          byte[] v = new byte[rnd.nextInt(4) == 0 ? 0 : 1 + rnd.nextInt(2000)];
          rnd.nextBytes(v);
          keys.writeBytes(b(k));
          values.writeBytes(v);
          keyEnds[i] = keys.size();
          valueEnds[i] = values.size();
          model.put(k, v);
        }
        keys.writeBytes(b("garbage"));
        values.writeBytes(b("garbage"));
        db.putColumns(
            0, "t", 0, keys.toByteArray(), keyEnds, values.toByteArray(), valueEnds, count);
        String single = "k" + rnd.nextInt(300);
        if (rnd.nextBoolean()) {
          db.deleteRow(0, "t", b(single));
          model.remove(single);
        } else {
          byte[] v = b("single" + round);
          db.put(0, "t", b(single), 0, v);
          model.put(single, v);
        }
        if (rnd.nextInt(50) == 0) {
          db.flush();
        }
      }
      db.flush();
      for (int i = 0; i < 300; i++) {
        String k = "k" + i;
        byte[][] row = db.get(0, "t", b(k));
        byte[] expected = model.get(k);
        if (expected == null) {
          assertNull(row, k + " (seed " + seed + ")");
        } else {
          assertArrayEquals(expected, row[0], k + " (seed " + seed + ")");
          assertNull(row[1], k + " column b (seed " + seed + ")");
        }
      }
    }
  }

  /**
   * A batch puts only its column: the row's other column, written before by single puts, survives
   * it in the memtable (folded on write or on read, by type), after a flush and across both. Random
   * batches and single puts of column b over few keys; model = a map of both columns.
   */
  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void batchesKeepTheRowsOtherColumns(MemTableType type) {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    Random rnd = new Random(seed);
    Map<String, byte[][]> model = new HashMap<>();
    try (Db db = open(dir, type)) {
      for (int round = 0; round < 300; round++) {
        String single = "k" + rnd.nextInt(100);
        byte[] vb = b("b" + round);
        db.put(0, "t", b(single), 1, vb);
        model.computeIfAbsent(single, k -> new byte[2][])[1] = vb;
        int count = 1 + rnd.nextInt(12);
        ByteArrayOutputStream keys = new ByteArrayOutputStream();
        ByteArrayOutputStream values = new ByteArrayOutputStream();
        int[] keyEnds = new int[count];
        int[] valueEnds = new int[count];
        for (int i = 0; i < count; i++) {
          String k = "k" + rnd.nextInt(100);
          byte[] va = b("a" + round + "." + i);
          keys.writeBytes(b(k));
          values.writeBytes(va);
          keyEnds[i] = keys.size();
          valueEnds[i] = values.size();
          model.computeIfAbsent(k, x -> new byte[2][])[0] = va;
        }
        db.putColumns(
            0, "t", 0, keys.toByteArray(), keyEnds, values.toByteArray(), valueEnds, count);
        if (rnd.nextInt(40) == 0) {
          db.flush();
        }
      }
      for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 100; i++) {
          String k = "k" + i;
          byte[][] row = db.get(0, "t", b(k));
          byte[][] expected = model.get(k);
          String what = k + " pass " + pass + " (seed " + seed + ")";
          if (expected == null) {
            assertNull(row, what);
          } else {
            assertArrayEquals(expected[0], row[0], what + " column a");
            assertArrayEquals(expected[1], row[1], what + " column b");
          }
        }
        db.flush();
      }
    }
  }

  /** Ends that decrease or pass their array, and a count past the ends, fail naming the family. */
  @Test
  void rejectsEndsThatDoNotFitTheirArrays() {
    try (Db db = open(dir, MemTableType.ADAPTIVE)) {
      byte[] keys = b("k1k2");
      byte[] values = b("v1v2");
      assertTrue(
          assertThrows(
                  IllegalArgumentException.class,
                  () ->
                      db.putColumns(0, "t", 0, keys, new int[] {2, 1}, values, new int[] {2, 4}, 2))
              .getMessage()
              .contains("'t'"));
      assertTrue(
          assertThrows(
                  IllegalArgumentException.class,
                  () ->
                      db.putColumns(0, "t", 0, keys, new int[] {2, 9}, values, new int[] {2, 4}, 2))
              .getMessage()
              .contains("'t'"));
      assertTrue(
          assertThrows(
                  IllegalArgumentException.class,
                  () -> db.putColumns(0, "t", 0, keys, new int[] {2}, values, new int[] {2}, 2))
              .getMessage()
              .contains("'t'"));
      assertThrows(
          IllegalArgumentException.class,
          () -> db.putColumns(0, "t", 5, keys, new int[] {2}, values, new int[] {2}, 1));
      assertNull(db.get(0, "t", b("k1")), "nothing of a rejected batch is written");
    }
  }
}
