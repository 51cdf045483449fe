package io.cobble.version;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.storage.ForwardingStorage;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageInput;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.vlog.ValueLogFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Obsolete working files someone else owns (a checkpoint they were handed to) are forgotten, not
 * deleted; the Db's other obsolete files are deleted as before, on a remote primary and locally.
 */
@Timeout(120)
class FileOwnershipTest {
  private static final int BUCKETS = 4;

  @TempDir Path tmp;

  private static Config config() {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("memtable.capacity", "64kb")
        .set("sst.block-size", "1kb")
        .set("sst.target-file-size", "32kb")
        .set("compaction.l0-file-limit", 100)
        .set("compaction.threads", 1)
        .set("value-separation.threshold", "100")
        .set("fsync.enabled", false)
        .build();
  }

  @Test
  void filesOwnedElsewhereOutliveCompactionOnARemotePrimary() throws Exception {
    try (Storage primary =
        StorageProviders.open(tmp.resolve("primary").toUri(), StorageOptions.empty())) {
      try (Db db = Db.open(primary, tmp.resolve("local"), config())) {
        Set<Long> handedOver = ConcurrentHashMap.newKeySet();
        db.versionSet().fileOwnership((number, vlog) -> !handedOver.contains(number));
        for (int round = 0; round < 4; round++) {
          write(db, round);
          db.flush();
        }
        Set<String> before = objects(db);
        Set<String> handedPaths = new HashSet<>();
        Set<String> ownPaths = new HashSet<>();
        boolean give = true;
        for (FileMeta f : db.versionSet().current().tree(0).allFiles()) {
          String path = db.versionSet().remote().path(f.number(), false);
          if (give) {
            handedOver.add(f.number());
            handedPaths.add(path);
          } else {
            ownPaths.add(path);
          }
          give = !give;
        }
        for (long n : db.versionSet().current().vlogs()) {
          handedOver.add(n);
          handedPaths.add(db.versionSet().remote().path(n, true));
        }
        assertFalse(handedPaths.isEmpty());
        assertFalse(ownPaths.isEmpty());
        db.compactAll();
        // Dead files outlive one more manifest (the fallback); two more publications release them.
        for (int round = 4; round < 6; round++) {
          write(db, round);
          db.flush();
        }
        db.versionSet().awaitDeletions();
        Set<String> listed = new HashSet<>(primary.list(RemotePrimary.DATA));
        Set<String> live = objects(db);
        int retiredHanded = 0;
        for (String p : handedPaths) {
          if (!live.contains(p)) {
            assertTrue(listed.contains(p), p + " was handed over and must not be deleted");
            retiredHanded++;
          }
        }
        assertTrue(retiredHanded > 0, "compaction retired some handed-over file");
        int deleted = 0;
        for (String p : ownPaths) {
          if (!live.contains(p)) {
            assertFalse(listed.contains(p), p + " is the Db's own and obsolete: deleted");
            deleted++;
          }
        }
        assertTrue(deleted > 0, "compaction made some own file obsolete: " + before + " " + live);
        check(db, 5);
      }
    }
  }

  /**
   * A Db installed on a fresh primary with another Db's files adopted where they lie reads them
   * there (nothing copied onto its primary), and even with the Db owning all its obsolete files it
   * never deletes or sweeps an adopted one: compaction retires them, they stay.
   */
  @Test
  void adoptedFilesAreReadWhereTheyLieAndNeverDeleted() throws Exception {
    try (Storage source =
            StorageProviders.open(tmp.resolve("source").toUri(), StorageOptions.empty());
        Storage own = StorageProviders.open(tmp.resolve("own").toUri(), StorageOptions.empty())) {
      Manifest m;
      Map<String, String> adopted = new HashMap<>();
      try (Db db = Db.open(source, tmp.resolve("source-local"), config())) {
        for (int round = 0; round < 3; round++) {
          write(db, round);
          db.flush();
        }
        VersionSet vs = db.versionSet();
        List<Manifest.FileEntry> files = new ArrayList<>();
        for (FileMeta f : vs.current().tree(0).allFiles()) {
          files.add(new Manifest.FileEntry(0, 0, f.number(), f.size(), f.properties()));
          adopted.put(
              RemotePrimary.adoptedPath(f.number(), false), vs.remote().path(f.number(), false));
        }
        for (ValueLogFile f : vs.current().vlogFiles().values()) {
          adopted.put(
              RemotePrimary.adoptedPath(f.number(), true), vs.remote().path(f.number(), true));
        }
        m =
            new Manifest(
                BUCKETS,
                vs.newFileNumber(),
                vs.schema(),
                files,
                new ArrayList<>(vs.current().vlogFiles().values()));
      }
      Set<String> sourceObjects = new HashSet<>(source.list(RemotePrimary.DATA));
      assertTrue(sourceObjects.containsAll(adopted.values()));
      Storage routed =
          new ForwardingStorage(own) {
            @Override
            public StorageInput open(String path, long length) throws java.io.IOException {
              String real = adopted.get(path);
              return real == null ? delegate.open(path, length) : source.open(real, length);
            }

            @Override
            public StorageInput open(String path) throws java.io.IOException {
              String real = adopted.get(path);
              return real == null ? delegate.open(path) : source.open(real);
            }

            @Override
            public long length(String path) throws java.io.IOException {
              String real = adopted.get(path);
              return real == null ? delegate.length(path) : source.length(real);
            }

            @Override
            public boolean exists(String path) throws java.io.IOException {
              String real = adopted.get(path);
              return real == null ? delegate.exists(path) : source.exists(real);
            }

            @Override
            public byte[] readAll(String path) throws java.io.IOException {
              String real = adopted.get(path);
              return real == null ? delegate.readAll(path) : source.readAll(real);
            }
          };
      RemotePrimary.installAdopted(routed, m, new int[] {0, BUCKETS - 1});
      assertTrue(own.list(RemotePrimary.DATA).isEmpty(), "no data object is copied");
      try (Db db = Db.open(routed, tmp.resolve("own-local"), config())) {
        check(db, 2);
        db.compactAll();
        for (int round = 3; round < 6; round++) {
          write(db, round);
          db.flush();
        }
        db.compactAll();
        db.versionSet().awaitDeletions();
        check(db, 5);
        for (FileMeta f : db.versionSet().current().tree(0).allFiles()) {
          assertFalse(
              adopted.containsKey(RemotePrimary.adoptedPath(f.number(), false)),
              "compaction retired every adopted table");
        }
        assertTrue(
            source.list(RemotePrimary.DATA).containsAll(sourceObjects),
            "the Db deletes no adopted file, also after compaction retired it");
        for (String p : own.list(RemotePrimary.DATA)) {
          assertFalse(p.startsWith(RemotePrimary.DATA + "e0-"), p + " is an own file");
        }
      }
    }
  }

  @Test
  void withoutOwnershipEveryObsoleteLocalFileIsDeleted() throws Exception {
    Path dir = tmp.resolve("db");
    try (Db db = Db.open(dir, config())) {
      db.versionSet().fileOwnership(null);
      for (int round = 0; round < 4; round++) {
        write(db, round);
        db.flush();
      }
      Set<Long> before = numbers(db);
      db.compactAll();
      for (int round = 4; round < 6; round++) {
        write(db, round);
        db.flush();
      }
      db.versionSet().awaitDeletions();
      Set<Long> live = numbers(db);
      for (long n : before) {
        if (!live.contains(n)) {
          assertFalse(
              java.nio.file.Files.exists(dir.resolve(String.format("%06d.sst", n))),
              "obsolete table " + n + " deleted");
        }
      }
      check(db, 5);
    }
  }

  private static void write(Db db, int gen) {
    for (int i = 0; i < 1000; i++) {
      db.put(i % BUCKETS, "default", key(i), 0, value(i, gen));
    }
  }

  private static void check(Db db, int gen) {
    for (int i = 0; i < 1000; i++) {
      byte[][] row = db.get(i % BUCKETS, "default", key(i));
      assertArrayEquals(value(i, gen), row == null ? null : row[0], "key " + i);
    }
    assertEquals(1000, count(db));
  }

  private static int count(Db db) {
    int n = 0;
    for (int b = 0; b < BUCKETS; b++) {
      try (io.cobble.ScanCursor c =
          db.scan(b, "default", null, null, io.cobble.ScanOptions.defaults())) {
        while (c.hasNext()) {
          c.next();
          n++;
        }
      }
    }
    return n;
  }

  private static byte[] key(int i) {
    return String.format("k%06d", i).getBytes(UTF_8);
  }

  private static byte[] value(int i, int gen) {
    return ("value-" + i + "-" + gen + "-" + "x".repeat(120)).getBytes(UTF_8);
  }

  private static Set<Long> numbers(Db db) {
    Set<Long> out = new HashSet<>();
    for (FileMeta f : db.versionSet().current().tree(0).allFiles()) {
      out.add(f.number());
    }
    return out;
  }

  private static Set<String> objects(Db db) {
    VersionSet vs = db.versionSet();
    Set<String> out = new HashSet<>();
    for (Tree t : vs.current().trees()) {
      for (FileMeta f : t.allFiles()) {
        out.add(vs.remote().path(f.number(), false));
      }
    }
    for (long n : vs.current().vlogs()) {
      out.add(vs.remote().path(n, true));
    }
    return out;
  }
}
