package io.cobble.flink.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.table.catalog.exceptions.CatalogException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The catalog's metadata versions: round trip, pruning, and a damaged newest version. */
class CatalogVersionsTest {

  @TempDir Path dir;

  @Test
  void versionsRoundTripAndOldOnesArePruned() throws Exception {
    try (Storage storage = StorageProviders.open(dir.toUri(), StorageOptions.empty())) {
      CatalogVersions versions = new CatalogVersions(storage, "test");
      CatalogState state = versions.latest();
      assertEquals(0, state.version());
      for (int i = 0; i < 20; i++) {
        CatalogState next = state.next(8).withDatabase("db" + i);
        versions.commit(state, next);
        state = next;
        assertEquals(state, versions.latest());
      }
      assertEquals(8, state.buckets());
      assertEquals(20, state.databases().size());
      List<String> files = storage.list(CatalogVersions.DIRECTORY);
      assertEquals(9, files.size(), "the newest and 8 before it: " + files);
    }
  }

  @Test
  void aDamagedNewestVersionIsAnErrorNamingTheFileNeverOlderData() throws Exception {
    try (Storage storage = StorageProviders.open(dir.toUri(), StorageOptions.empty())) {
      CatalogVersions versions = new CatalogVersions(storage, "test");
      CatalogState base = versions.latest();
      CatalogState first = base.next(4).withDatabase("a");
      versions.commit(base, first);
      versions.commit(first, first.next(4).withDatabase("b"));
      Path newest = dir.resolve(CatalogVersions.path(2));
      byte[] bytes = Files.readAllBytes(newest);
      for (int i = 0; i < bytes.length; i++) {
        byte[] damaged = bytes.clone();
        damaged[i] ^= 0x40;
        Files.write(newest, damaged);
        CatalogException e = assertThrows(CatalogException.class, versions::latest, "byte " + i);
        assertTrue(e.getMessage().contains(CatalogVersions.path(2)), e.getMessage());
      }
      Files.write(newest, bytes);
      assertEquals(List.of("a", "b"), versions.latest().databases());
    }
  }
}
