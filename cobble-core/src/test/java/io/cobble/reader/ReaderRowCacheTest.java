package io.cobble.reader;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.ManualClock;
import io.cobble.schema.ColumnSpec;
import io.cobble.snapshot.GlobalSnapshotCoordinator;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.storage.file.FileStorage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Projected point reads of a {@link Reader} with {@code row-cache.size}: every answer equals the
 * same read of a reader without the cache, for several projections at once, across a move to a
 * newer snapshot (a key read before answers with its new values, or none), and for values that
 * expire (a cached answer never outlives its expiry); repeated reads are answered by the cache.
 */
class ReaderRowCacheTest {

  @TempDir Path tmp;

  private static final int KEYS = 400;
  private static final int[][] PROJECTIONS = {{0}, {2, 0}, {1}, {2}};

  private static Config config(String ranges, ManualClock clock, String rowCache) {
    return Config.builder()
        .setAll(ReaderTest.config(ranges).values())
        .set("row-cache.size", rowCache)
        .clock(clock)
        .build();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  /** Gen {@code gen}'s writes: some keys lose column 1 or their row, some values expire. */
  private static void write(Db db, int gen, Random random) {
    for (int i = 0; i < KEYS; i++) {
      int bucket = i % ReaderTest.BUCKETS;
      if (!db.config().ownsBucket(bucket)) {
        continue;
      }
      byte[] key = ReaderTest.key(i);
      int roll = random.nextInt(10);
      if (roll == 0) {
        for (int column = 0; column < 3; column++) {
          db.delete(bucket, "default", key, column);
        }
      } else if (roll == 1) {
        db.put(bucket, "default", key, 1, bytes("short-" + gen + "-" + i), 1_000);
      } else {
        db.put(bucket, "default", key, 0, bytes("a" + gen + "-" + i));
        if (roll < 6) {
          db.put(bucket, "default", key, 1, bytes("b" + gen + "-" + i));
        }
        if (roll == 9) {
          db.put(bucket, "default", key, 2, bytes("c" + gen + "-" + i));
        }
      }
    }
  }

  private static List<String> read(Reader reader, int i, int[] projection) {
    List<String> out = new ArrayList<>();
    boolean found =
        reader.readColumns(
            i % ReaderTest.BUCKETS,
            "default",
            ReaderTest.key(i),
            projection,
            (index, buf, off, len) -> out.add(index + "=" + new String(buf, off, len, UTF_8)));
    assertEquals(found, !out.isEmpty(), "key " + i);
    return out;
  }

  private static void compare(Reader cached, Reader plain, Random random, int reads) {
    for (int n = 0; n < reads; n++) {
      int i = random.nextInt(KEYS);
      int[] projection = PROJECTIONS[random.nextInt(PROJECTIONS.length)];
      assertEquals(
          read(plain, i, projection),
          read(cached, i, projection),
          "key " + i + ", columns " + Arrays.toString(projection));
    }
  }

  @Test
  void cachedReadsAnswerAsUncachedOnesAcrossSnapshotsAndExpiry() throws Exception {
    ManualClock clock = new ManualClock(1_000_000);
    Random random = new Random(42);
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true);
        Db a = Db.open(tmp.resolve("a"), config("0-3", clock, "0"));
        Db b = Db.open(tmp.resolve("b"), config("4-7", clock, "0"));
        SnapshotManager sa = SnapshotManager.open(a, volume, "a");
        SnapshotManager sb = SnapshotManager.open(b, volume, "b")) {
      a.addColumn("default", ColumnSpec.of("b"));
      a.addColumn("default", ColumnSpec.of("c"));
      b.addColumn("default", ColumnSpec.of("b"));
      b.addColumn("default", ColumnSpec.of("c"));
      GlobalSnapshotCoordinator coordinator =
          new GlobalSnapshotCoordinator(volume, ReaderTest.BUCKETS, 0);
      for (int gen = 1; gen <= 3; gen++) {
        write(a, gen, random);
        write(b, gen, random);
        a.flush();
        coordinator.commit(
            List.of(
                ShardRef.of("a", sa.snapshot().published().join().id()),
                ShardRef.of("b", sb.snapshot().published().join().id())));
        if (gen == 1) {
          continue;
        }
        try (Reader cached = Reader.open(volume, config("all", clock, "1mb"));
            Reader plain = Reader.open(volume, config("all", clock, "0"))) {
          assertNull(plain.rowCache());
          compare(cached, plain, random, 3_000);
          long hits = cached.rowCache().hits();
          assertTrue(
              hits > 1_000,
              "repeated reads answered by the cache: "
                  + hits
                  + " misses "
                  + cached.rowCache().misses()
                  + " usage "
                  + cached.rowCache().usage());

          // Values written with a TTL expire while the reader stays on this snapshot.
          clock.advance(2_000);
          compare(cached, plain, random, 3_000);

          // The writers move on: a refreshed reader answers from the new snapshot only.
          write(a, gen + 10, random);
          write(b, gen + 10, random);
          coordinator.commit(
              List.of(
                  ShardRef.of("a", sa.snapshot().published().join().id()),
                  ShardRef.of("b", sb.snapshot().published().join().id())));
          assertTrue(cached.refresh());
          assertTrue(plain.refresh());
          compare(cached, plain, random, 3_000);
          clock.advance(2_000);
          compare(cached, plain, random, 3_000);
        }
      }
    }
  }
}
