package io.cobble.flink.fs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageInput;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageOutput;
import java.io.EOFException;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Storage contract through Flink's file systems, on a scheme only Flink serves ({@link
 * TestSchemeFileSystemFactory}): writes, whole and positional reads, prefix listing without
 * temporary files, deletion, renames onto existing files, atomic publication; and the provider's
 * configuration: the table's options reach the scheme's factory with dotted keys unchanged, and
 * without them the file system Flink configured for the process applies.
 */
class FlinkFileSystemStorageTest {

  @TempDir Path dir;

  private URI root() {
    return URI.create(
        TestSchemeFileSystemFactory.SCHEME + "://" + dir.resolve("root").toUri().getPath());
  }

  private static StorageOptions withAccountKey() {
    return StorageOptions.of(
        Map.of(TestSchemeFileSystemFactory.ACCOUNT_KEY, TestSchemeFileSystemFactory.SECRET));
  }

  private Storage open() throws IOException {
    return new FlinkFileSystemStorageProvider().open(root(), withAccountKey());
  }

  private static void write(Storage storage, String path, String text) throws IOException {
    try (StorageOutput out = storage.create(path)) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
      assertEquals(text.length(), out.position());
    }
  }

  @Test
  void writesReadsListsAndDeletesFiles() throws IOException {
    try (Storage storage = open()) {
      write(storage, "data/a.sst", "0123456789");
      write(storage, "data/b.vlog", "bb");
      write(storage, "data/sub/c.sst", "c");
      write(storage, "global/CURRENT", "1");
      assertTrue(
          Files.isRegularFile(dir.resolve("root/data/a.sst")), "written where the path says");
      assertEquals("0123456789", new String(storage.readAll("data/a.sst"), StandardCharsets.UTF_8));
      assertEquals(10, storage.length("data/a.sst"));
      try (StorageInput in = storage.open("data/a.sst")) {
        assertEquals(10, in.length());
        assertArrayEquals("345".getBytes(StandardCharsets.UTF_8), in.read(3, 3));
        assertThrows(EOFException.class, () -> in.read(8, 3));
      }
      assertEquals(
          List.of("data/a.sst", "data/b.vlog", "data/sub/c.sst", "global/CURRENT"),
          storage.list(""));
      assertEquals(List.of("data/a.sst", "data/b.vlog", "data/sub/c.sst"), storage.list("data/"));
      assertEquals(List.of("data/a.sst"), storage.list("data/a"));
      assertEquals(List.of(), storage.list("nothing/"));
      assertTrue(storage.exists("data/b.vlog"));
      storage.delete("data/b.vlog");
      storage.delete("data/b.vlog");
      assertFalse(storage.exists("data/b.vlog"));
      assertThrows(NoSuchFileException.class, () -> storage.readAll("data/b.vlog"));
      assertThrows(NoSuchFileException.class, () -> storage.length("data/b.vlog"));
      assertThrows(NoSuchFileException.class, () -> storage.open("data/b.vlog"));
    }
  }

  @Test
  void renamesReplaceAndPublicationsAreWhole() throws IOException {
    try (Storage storage = open()) {
      write(storage, "x", "new");
      write(storage, "y", "old");
      storage.rename("x", "y");
      assertEquals("new", new String(storage.readAll("y"), StandardCharsets.UTF_8));
      assertFalse(storage.exists("x"));
      assertThrows(NoSuchFileException.class, () -> storage.rename("x", "z"));

      storage.publishAtomically("global/CURRENT", "1".getBytes(StandardCharsets.UTF_8));
      storage.publishAtomically("global/CURRENT", "22".getBytes(StandardCharsets.UTF_8));
      assertEquals("22", new String(storage.readAll("global/CURRENT"), StandardCharsets.UTF_8));
      assertEquals(List.of("global/CURRENT"), storage.list("global/"));
      try (java.util.stream.Stream<Path> files = Files.list(dir.resolve("root/global"))) {
        assertEquals(1, files.count(), "no temporary file left");
      }
    }
  }

  @Test
  void tableOptionsConfigureTheSchemesFileSystem() throws IOException {
    // Without the account key the factory refuses, as a real store refuses a missing credential;
    // the error names this provider and the scheme, and never a value.
    IOException refused =
        assertThrows(
            IOException.class,
            () -> new FlinkFileSystemStorageProvider().open(root(), StorageOptions.empty()));
    assertTrue(refused.getMessage().contains("The Flink file system provider cannot open"));
    assertTrue(refused.getMessage().contains("scheme 'cobbletest'"), refused.getMessage());
    IOException wrongKey =
        assertThrows(
            IOException.class,
            () ->
                new FlinkFileSystemStorageProvider()
                    .open(
                        root(),
                        StorageOptions.of(
                            Map.of(TestSchemeFileSystemFactory.ACCOUNT_KEY, "not-the-key"))));
    assertTrue(wrongKey.getMessage().contains("Access denied"), wrongKey.getMessage());
    assertFalse(wrongKey.getMessage().contains("not-the-key"), wrongKey.getMessage());
    try (Storage storage = open()) {
      write(storage, "f", "reached");
    }
    assertEquals("reached", Files.readString(dir.resolve("root/f")));
  }
}
