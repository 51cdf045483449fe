package io.cobble.storage.file;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageInput;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageOutput;
import io.cobble.storage.StorageProviders;
import io.cobble.util.NewFile;
import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class FileStorageTest {

  @TempDir Path dir;

  private Storage open() throws IOException {
    return StorageProviders.open(dir.resolve("root").toString(), StorageOptions.empty());
  }

  @Test
  void createExclusivelyWritesOnlyTheFirstOfRacingCreators() throws Exception {
    try (Storage storage = open()) {
      byte[] first = "first".getBytes(StandardCharsets.UTF_8);
      assertTrue(storage.createExclusively("meta/v-1", first));
      assertFalse(storage.createExclusively("meta/v-1", "second".getBytes(StandardCharsets.UTF_8)));
      assertArrayEquals(first, storage.readAll("meta/v-1"));
      // Many threads race for each name: exactly one wins, and the file holds the winner's bytes.
      for (int round = 0; round < 20; round++) {
        String path = "race/v-" + round;
        java.util.concurrent.ConcurrentLinkedQueue<String> winners =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
        java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
        List<Thread> threads = new java.util.ArrayList<>();
        for (int t = 0; t < 4; t++) {
          String content = "writer-" + t;
          Thread thread =
              new Thread(
                  () -> {
                    try {
                      start.await();
                      if (storage.createExclusively(
                          path, content.getBytes(StandardCharsets.UTF_8))) {
                        winners.add(content);
                      }
                    } catch (Exception e) {
                      winners.add("error: " + e);
                    }
                  });
          thread.start();
          threads.add(thread);
        }
        start.countDown();
        for (Thread thread : threads) {
          thread.join();
        }
        assertEquals(1, winners.size(), winners.toString());
        assertEquals(winners.peek(), new String(storage.readAll(path), StandardCharsets.UTF_8));
      }
      assertEquals(21, storage.list("").size(), "no temporary files left: " + storage.list(""));
    }
  }

  @Test
  void plainPathOpensFileStorageAndCreatesTheRoot() throws IOException {
    try (Storage storage = open()) {
      assertTrue(storage instanceof FileStorage, storage.toString());
      assertTrue(Files.isDirectory(dir.resolve("root")));
      assertEquals(dir.resolve("root").toUri(), storage.uri());
    }
  }

  @Test
  void roundTripOfEveryOperation() throws IOException {
    byte[] data = new byte[200_000];
    new Random(7).nextBytes(data);
    try (Storage storage = open()) {
      try (StorageOutput out = storage.create("a/b/data.sst")) {
        out.write(data, 0, 10);
        out.write(data[10]);
        out.write(data, 11, data.length - 11);
        assertEquals(data.length, out.position());
      }
      assertTrue(storage.exists("a/b/data.sst"));
      assertFalse(storage.exists("a/b"), "directories are not files");
      assertEquals(data.length, storage.length("a/b/data.sst"));
      assertArrayEquals(data, storage.readAll("a/b/data.sst"));
      try (StorageInput in = storage.open("a/b/data.sst")) {
        assertEquals(data.length, in.length());
        assertArrayEquals(Arrays.copyOfRange(data, 70_000, 74_096), in.read(70_000, 4096));
        assertThrows(EOFException.class, () -> in.read(data.length - 1, 2));
        assertThrows(EOFException.class, () -> in.read(-1, 1));
      }

      storage.rename("a/b/data.sst", "c/moved.sst");
      assertFalse(storage.exists("a/b/data.sst"));
      assertArrayEquals(data, storage.readAll("c/moved.sst"));

      storage.publishAtomically("meta/CURRENT", "1".getBytes(StandardCharsets.UTF_8));
      assertEquals(List.of("c/moved.sst", "meta/CURRENT"), storage.list(""));
      assertEquals(List.of("c/moved.sst"), storage.list("c/"));
      assertEquals(List.of("meta/CURRENT"), storage.list("meta/CU"));
      assertEquals(List.of(), storage.list("nothing/"));

      storage.delete("c/moved.sst");
      storage.delete("c/moved.sst");
      storage.deleteAll(List.of("meta/CURRENT", "never/existed"));
      assertEquals(List.of(), storage.list(""));
      assertThrows(NoSuchFileException.class, () -> storage.readAll("c/moved.sst"));
      assertThrows(NoSuchFileException.class, () -> storage.length("c/moved.sst"));
      assertThrows(NoSuchFileException.class, () -> storage.open("c/moved.sst"));
      assertThrows(NoSuchFileException.class, () -> storage.rename("c/moved.sst", "x"));
    }
  }

  @Test
  void syncMakesWrittenBytesVisibleBeforeClose() throws IOException {
    try (Storage storage = open()) {
      StorageOutput out = storage.create("wal/000001.log");
      out.write("record-1".getBytes(StandardCharsets.UTF_8));
      assertTrue(out.sync(), "file systems make partial files durable");
      assertEquals(
          "record-1", new String(storage.readAll("wal/000001.log"), StandardCharsets.UTF_8));
      out.write("record-2".getBytes(StandardCharsets.UTF_8));
      assertTrue(out.sync());
      out.close();
      out.close();
      assertEquals(16, storage.length("wal/000001.log"));
      assertThrows(ClosedChannelException.class, () -> out.write(1));
      assertThrows(ClosedChannelException.class, out::sync);
    }
  }

  @Test
  void createTruncatesAnExistingFile() throws IOException {
    try (Storage storage = open()) {
      try (StorageOutput out = storage.create("f")) {
        out.write(new byte[100]);
      }
      try (StorageOutput out = storage.create("f")) {
        out.write(new byte[3]);
      }
      assertEquals(3, storage.length("f"));
    }
  }

  @Test
  void linkGivesALocalFileASecondNameThatKeepsItsBytes() throws IOException {
    byte[] a = bytes("table a", 10_000);
    byte[] b = bytes("table b", 5_000);
    Path source = write(dir.resolve("work/a.sst"), a);
    try (Storage storage = open()) {
      assertTrue(storage.link(source, "data/s/a.sst"));
      Path target = dir.resolve("root/data/s/a.sst");
      assertTrue(Files.isSameFile(source, target));
      assertArrayEquals(a, storage.readAll("data/s/a.sst"));
      Files.delete(source);
      assertArrayEquals(a, storage.readAll("data/s/a.sst"), "the link keeps the bytes");
      // A file already at the name is replaced.
      assertTrue(storage.link(write(dir.resolve("work/b.sst"), b), "data/s/a.sst"));
      assertArrayEquals(b, storage.readAll("data/s/a.sst"));
      assertEquals(List.of("data/s/a.sst"), storage.list(""));
    }
  }

  @Test
  void aNameWrittenAgainGetsANewFileAndLinksKeepTheOldBytes() throws IOException {
    byte[] old = bytes("old", 20_000);
    byte[] next = bytes("new", 300);
    Path table = write(dir.resolve("work/000007.sst"), old);
    try (Storage storage = open()) {
      assertTrue(storage.link(table, "data/000007-x.sst"));
      // The engine writes a table under a name it used before (a number reused after a crash).
      write(table, next);
      assertArrayEquals(next, Files.readAllBytes(table));
      assertArrayEquals(old, storage.readAll("data/000007-x.sst"));
      // The same holds for files this storage creates.
      try (StorageOutput out = storage.create("f")) {
        out.write(old);
      }
      Path other = dir.resolve("other-name");
      Files.createLink(other, dir.resolve("root/f"));
      try (StorageOutput out = storage.create("f")) {
        out.write(next);
      }
      assertArrayEquals(next, storage.readAll("f"));
      assertArrayEquals(old, Files.readAllBytes(other));
    }
  }

  @Test
  void linkAcrossDevicesCreatesNothingAndAnswersFalse() throws IOException {
    Path shm = Paths.get("/dev/shm");
    Assumptions.assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm), "no /dev/shm");
    Assumptions.assumeFalse(
        Files.getAttribute(shm, "unix:dev").equals(Files.getAttribute(dir, "unix:dev")),
        "/dev/shm is on the temporary directory's device");
    Path source = write(dir.resolve("work/a.sst"), bytes("a", 1000));
    Path root = Files.createTempDirectory(shm, "cobble-link-");
    try (Storage storage = FileStorage.open(root, true)) {
      assertFalse(storage.link(source, "data/a.sst"));
      assertFalse(storage.exists("data/a.sst"));
    } finally {
      try (Stream<Path> files = Files.walk(root)) {
        for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
          Files.delete(p);
        }
      }
    }
  }

  private static byte[] bytes(String seed, int length) {
    byte[] out = new byte[length];
    new Random(seed.hashCode()).nextBytes(out);
    return out;
  }

  /** Writes {@code content} to {@code file} as the engine writes its tables. */
  private static Path write(Path file, byte[] content) throws IOException {
    Files.createDirectories(file.getParent());
    NewFile f = new NewFile(file);
    f.write(content);
    f.finish(false);
    return file;
  }

  @Test
  void renameReplacesTheTarget() throws IOException {
    try (Storage storage = open()) {
      assertTrue(storage.atomicRename());
      storage.publishAtomically("old", new byte[] {1});
      storage.publishAtomically("new", new byte[] {2, 2});
      storage.rename("new", "old");
      assertArrayEquals(new byte[] {2, 2}, storage.readAll("old"));
      assertEquals(List.of("old"), storage.list(""));
    }
  }

  @Test
  void publishIsAtomicForConcurrentReaders() throws Exception {
    byte[] a = new byte[512 * 1024];
    byte[] b = new byte[256 * 1024];
    Arrays.fill(a, (byte) 'a');
    Arrays.fill(b, (byte) 'b');
    try (Storage storage = open()) {
      storage.publishAtomically("manifest", a);
      AtomicBoolean done = new AtomicBoolean();
      AtomicReference<String> torn = new AtomicReference<>();
      Thread reader =
          new Thread(
              () -> {
                try {
                  while (!done.get()) {
                    byte[] seen = storage.readAll("manifest");
                    if (!Arrays.equals(seen, a) && !Arrays.equals(seen, b)) {
                      torn.set("read " + seen.length + " bytes that are neither version");
                    }
                  }
                } catch (IOException e) {
                  torn.set(e.toString());
                }
              });
      reader.start();
      for (int i = 0; i < 200; i++) {
        storage.publishAtomically("manifest", i % 2 == 0 ? b : a);
      }
      done.set(true);
      reader.join(10_000);
      assertEquals(null, torn.get());
      assertEquals(List.of("manifest"), storage.list(""), "no temporary file is left behind");
    }
  }

  @Test
  void aPublicationCutShortLeavesTheOldContentAndAnInvisibleTempFile() throws IOException {
    try (Storage storage = open()) {
      storage.publishAtomically("meta/CURRENT", new byte[] {1});
      // What a crash between writing the temporary file and renaming it leaves behind.
      Path leftover = dir.resolve("root/meta/" + FileStorage.TEMP_PREFIX + "CURRENT.crashed");
      Files.write(leftover, new byte[] {9, 9});
      assertArrayEquals(new byte[] {1}, storage.readAll("meta/CURRENT"));
      assertEquals(List.of("meta/CURRENT"), storage.list("meta/"));
    }
  }

  @Test
  void pathsCannotEscapeTheRoot() throws IOException {
    try (Storage storage = open()) {
      for (String bad : List.of("../x", "a/../../x", "/etc/passwd", "a//b", "a/./b", "", "a/")) {
        assertThrows(IllegalArgumentException.class, () -> storage.create(bad), bad);
      }
      assertThrows(IllegalArgumentException.class, () -> storage.list("../"));
    }
  }

  @Test
  void aListingPassesOverFilesThatVanishWhileItWalks() throws Exception {
    try (Storage storage =
        StorageProviders.open(
            dir.resolve("churn").toString(), StorageOptions.of(Map.of("fsync", "false")))) {
      storage.publishAtomically("shards/g0/stable", new byte[] {1});
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> churnFailure = new AtomicReference<>();
      // Another writer publishing (a temporary file renamed) and deleting beside the listed one.
      Thread churn =
          new Thread(
              () -> {
                try {
                  for (int i = 0; !stop.get(); i++) {
                    String path = "shards/g0/snapshot-" + (i % 8);
                    storage.publishAtomically(path, new byte[64]);
                    storage.delete(path);
                  }
                } catch (Throwable t) {
                  churnFailure.set(t);
                }
              });
      churn.start();
      try {
        for (int i = 0; i < 3_000; i++) {
          List<String> listed = storage.list("shards/");
          assertTrue(listed.contains("shards/g0/stable"), listed.toString());
          assertTrue(listed.stream().noneMatch(p -> p.contains(".cobble-tmp.")), listed.toString());
        }
      } finally {
        stop.set(true);
        churn.join();
      }
      assertEquals(null, churnFailure.get());
    }
  }

  @Test
  void fsyncCanBeTurnedOffAndBadValuesAreRejected() throws IOException {
    try (Storage storage =
        StorageProviders.open(
            dir.resolve("scratch").toString(), StorageOptions.of(Map.of("fsync", "false")))) {
      assertTrue(storage.toString().contains("fsync off"), storage.toString());
      try (StorageOutput out = storage.create("x")) {
        out.write(1);
        assertTrue(out.sync());
      }
      storage.publishAtomically("y", new byte[] {1});
      assertEquals(List.of("x", "y"), storage.list(""));
    }
    IllegalArgumentException failure =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                StorageProviders.open(
                    dir.toString(), StorageOptions.of(Map.of("fsync", "sometimes"))));
    assertTrue(failure.getMessage().contains("'fsync'"), failure.getMessage());
  }

  @Test
  void unknownOptionKeyListsTheAcceptedKeys() {
    IllegalArgumentException failure =
        assertThrows(
            IllegalArgumentException.class,
            () -> StorageProviders.open(dir.toString(), StorageOptions.of(Map.of("fsnyc", "x"))));
    assertTrue(failure.getMessage().contains("'fsnyc'"), failure.getMessage());
    assertTrue(failure.getMessage().contains("Accepted keys"), failure.getMessage());
    assertTrue(failure.getMessage().contains("fsync"), failure.getMessage());
  }

  @Test
  void rootThatIsAFileIsRejected() throws IOException {
    Path file = Files.write(dir.resolve("plain-file"), new byte[] {1});
    assertThrows(
        IOException.class, () -> StorageProviders.open(file.toString(), StorageOptions.empty()));
  }
}
