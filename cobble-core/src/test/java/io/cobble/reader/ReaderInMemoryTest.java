package io.cobble.reader;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.schema.ColumnSpec;
import io.cobble.snapshot.GlobalSnapshotCoordinator;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.storage.file.FileStorage;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Reader#getInMemory}: answers exactly what {@link Reader#get} answers when every block it
 * needs is in memory, and otherwise says so without reading storage.
 */
class ReaderInMemoryTest {
  private static final int BUCKETS = 4;
  private static final int KEYS = 3000;
  private static final int[] COLUMNS = {0, 1};

  @TempDir Path tmp;

  private static Config config(String ranges) {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("bucket-ranges", ranges)
        .set("memtable.capacity", "64kb")
        .set("sst.target-file-size", "32kb")
        .set("value-separation.threshold", "200")
        .build();
  }

  private static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(UTF_8);
  }

  /** Every 50th row has a separated (value-log) value in column 1. */
  private static byte[] value(int i) {
    String v = "v-" + i;
    return (i % 50 == 0 ? v.repeat(100) : v).getBytes(UTF_8);
  }

  /** Writes KEYS rows in two columns and publishes them as the volume's current global snapshot. */
  private static void publish(FileStorage volume, Db db) {
    try (SnapshotManager snapshots = SnapshotManager.open(db, volume, "a")) {
      db.addColumn("default", ColumnSpec.of("second"));
      for (int i = 0; i < KEYS; i++) {
        db.put(i % BUCKETS, "default", key(i), 0, ("c0-" + i).getBytes(UTF_8));
        db.put(i % BUCKETS, "default", key(i), 1, value(i));
      }
      long shard = snapshots.snapshot().published().join().id();
      new GlobalSnapshotCoordinator(volume, BUCKETS, 0).commit(List.of(ShardRef.of("a", shard)));
    }
  }

  /**
   * A reader's tables never change, so they keep the blocks point reads bring in: once read, a
   * block is read again without a block-cache lookup, and closing the reader gives the memory set
   * aside for them back to the cache.
   */
  @Test
  void readBlocksStayInMemoryWithoutCacheLookupsUntilClose() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true);
        Db db = Db.open(tmp.resolve("db"), config("all"))) {
      publish(volume, db);
      Reader reader = Reader.open(volume, config("all"));
      try {
        for (int i = 0; i < KEYS; i++) {
          assertArrayEquals(value(i), reader.get(i % BUCKETS, "default", key(i), COLUMNS)[1]);
        }
        assertTrue(reader.cache().reserved() > 0, "memory set aside for the read tables");
        long lookups = reader.cache().hits() + reader.cache().misses();
        for (int i = 0; i < KEYS; i++) {
          assertArrayEquals(
              ("c0-" + i).getBytes(UTF_8), reader.get(i % BUCKETS, "default", key(i), COLUMNS)[0]);
        }
        assertEquals(
            lookups,
            reader.cache().hits() + reader.cache().misses(),
            "reads of blocks read before looked them up in the cache");
      } finally {
        reader.close();
      }
      assertEquals(0, reader.cache().reserved(), "closed tables keep no memory set aside");
    }
  }

  /** Tables larger than the cache can set aside keep nothing: the whole cache stays an LRU. */
  @Test
  void tablesLargerThanTheCacheReadThroughItsLru() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true);
        Db db = Db.open(tmp.resolve("db"), config("all"))) {
      publish(volume, db);
      Config small =
          Config.builder().setAll(config("all").values()).set("block-cache.size", "16kb").build();
      try (Reader reader = Reader.open(volume, small)) {
        for (int round = 0; round < 2; round++) {
          long lookups = reader.cache().hits() + reader.cache().misses();
          for (int i = 0; i < KEYS; i++) {
            assertArrayEquals(value(i), reader.get(i % BUCKETS, "default", key(i), COLUMNS)[1]);
          }
          assertTrue(reader.cache().hits() + reader.cache().misses() > lookups + KEYS / 2);
        }
        assertEquals(0, reader.cache().reserved());
      }
    }
  }

  @Test
  void answersFromMemoryExactlyOrSaysItNeedsStorage() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true);
        Db db = Db.open(tmp.resolve("db"), config("all"))) {
      publish(volume, db);

      try (Reader reader = Reader.open(volume, config("all"))) {
        assertSame(
            Reader.NOT_IN_MEMORY,
            reader.getInMemory(0, "default", key(0), COLUMNS),
            "a shard not opened yet needs storage");
        assertEquals(0, reader.openShards(), "and is not opened by a memory-only read");

        int needStorage = 0;
        for (int i = 0; i < KEYS; i++) {
          int bucket = i % BUCKETS;
          byte[][] inMemory = reader.getInMemory(bucket, "default", key(i), COLUMNS);
          byte[][] read = reader.get(bucket, "default", key(i), COLUMNS);
          assertArrayEquals(("c0-" + i).getBytes(UTF_8), read[0]);
          assertArrayEquals(value(i), read[1]);
          if (inMemory == Reader.NOT_IN_MEMORY) {
            needStorage++;
          } else {
            assertEquals(2, inMemory.length);
            assertArrayEquals(read[0], inMemory[0], "key " + i);
            assertArrayEquals(read[1], inMemory[1], "key " + i);
          }
        }
        assertTrue(needStorage > 0, "cold blocks need storage");

        // Every block is cached now: rows answer from memory, unless a value is separated.
        for (int i = 0; i < KEYS; i++) {
          byte[][] inMemory = reader.getInMemory(i % BUCKETS, "default", key(i), COLUMNS);
          if (i % 50 == 0) {
            assertSame(Reader.NOT_IN_MEMORY, inMemory, "a value-log read is a storage read");
          } else {
            assertArrayEquals(("c0-" + i).getBytes(UTF_8), inMemory[0], "key " + i);
            assertArrayEquals(value(i), inMemory[1], "key " + i);
          }
        }
        for (int i = KEYS; i < KEYS + 500; i++) {
          assertNull(reader.get(i % BUCKETS, "default", key(i), COLUMNS));
          assertNull(reader.getInMemory(i % BUCKETS, "default", key(i), COLUMNS), "miss " + i);
        }
        // A thread that got NOT_IN_MEMORY reads storage again on a normal get.
        assertArrayEquals(value(0), reader.get(0, "default", key(0), COLUMNS)[1]);
      }
    }
  }
}
