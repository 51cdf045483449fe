package io.cobble.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.storage.file.FileStorageProvider;
import io.cobble.storage.s3.S3StorageProvider;
import java.net.URI;
import java.nio.file.Paths;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StorageProvidersTest {

  @Test
  void builtInProvidersAreFoundByScheme() {
    assertTrue(StorageProviders.forScheme("file") instanceof FileStorageProvider);
    assertTrue(StorageProviders.forScheme("S3") instanceof S3StorageProvider);
    assertTrue(StorageProviders.installed().keySet().containsAll(Set.of("file", "s3")));
  }

  @Test
  void unknownSchemeListsTheInstalledOnes() {
    IllegalArgumentException failure =
        assertThrows(IllegalArgumentException.class, () -> StorageProviders.forScheme("gs"));
    assertTrue(failure.getMessage().contains("'gs'"), failure.getMessage());
    assertTrue(failure.getMessage().contains("Installed schemes: file"), failure.getMessage());
  }

  @Test
  void locationsWithoutSchemeAreLocalPaths() {
    assertEquals(
        Paths.get("rel/dir").toAbsolutePath().normalize().toUri(),
        StorageProviders.toUri("rel/dir"));
    assertEquals(URI.create("s3://bucket/p"), StorageProviders.toUri("s3://bucket/p"));
    assertEquals(URI.create("file:///tmp/x"), StorageProviders.toUri("file:///tmp/x"));
  }

  @Test
  void pathsAreChecked() {
    assertEquals("a/b.sst", StoragePath.check("a/b.sst"));
    assertEquals("", StoragePath.checkPrefix(""));
    assertEquals("a/", StoragePath.checkPrefix("a/"));
    for (String bad : new String[] {"", "/a", "a/", "a//b", "..", "a/../b", "a\\b", "./a"}) {
      assertThrows(IllegalArgumentException.class, () -> StoragePath.check(bad), bad);
    }
    assertThrows(IllegalArgumentException.class, () -> StoragePath.checkPrefix("/"));
  }
}
