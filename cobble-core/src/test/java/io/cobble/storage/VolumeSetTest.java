package io.cobble.storage;

import static io.cobble.storage.VolumeKind.CACHE;
import static io.cobble.storage.VolumeKind.META;
import static io.cobble.storage.VolumeKind.PRIMARY_HIGH;
import static io.cobble.storage.VolumeKind.PRIMARY_LOW;
import static io.cobble.storage.VolumeKind.PRIMARY_MEDIUM;
import static io.cobble.storage.VolumeKind.READ_ONLY;
import static io.cobble.storage.VolumeKind.SNAPSHOT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VolumeSetTest {

  @TempDir Path dir;

  private static String rejected(List<Volume> volumes) {
    return assertThrows(IllegalArgumentException.class, () -> VolumeSet.of(volumes)).getMessage();
  }

  @Test
  void aSingleLocalPathIsACompleteSetup() throws IOException {
    VolumeSet set = VolumeSet.local(dir.resolve("db").toString());
    Volume only = set.volumes().get(0);
    assertEquals("file", only.uri().getScheme());
    assertEquals(List.of(only), set.primaries());
    assertEquals(only, set.meta());
    assertEquals(Optional.of(only), set.snapshot());
    assertEquals(Optional.empty(), set.cache());
    try (Storage storage = only.open()) {
      storage.publishAtomically("x", new byte[] {1});
    }
    assertTrue(Files.exists(dir.resolve("db/x")));
  }

  @Test
  void aRemotePrimaryNeedsALocalCacheVolume() {
    Volume remote = Volume.of("s3://bucket/db", PRIMARY_HIGH, META);
    String message = rejected(List.of(remote));
    assertTrue(message.contains("s3://bucket/db"), message);
    assertTrue(message.contains("CACHE volume"), message);
    assertTrue(message.contains("VolumeKind.CACHE"), "names the fix: " + message);
    VolumeSet set = VolumeSet.of(List.of(remote, Volume.of("/local/cache", CACHE)));
    assertEquals(List.of(remote), set.primaries());
    assertEquals("file", set.cache().orElseThrow().uri().getScheme());
    // A local first primary needs no cache, whatever the other primaries are.
    VolumeSet.of(
        List.of(Volume.of("/data/fast", PRIMARY_HIGH), Volume.of("s3://b/p", PRIMARY_LOW)));
  }

  @Test
  void tieredSetupResolvesEachRole() {
    Volume fast = Volume.of("/data/fast", PRIMARY_HIGH);
    Volume slow = Volume.of("/data/slow", PRIMARY_LOW);
    Volume medium = Volume.of("/data/medium", PRIMARY_MEDIUM, META);
    Volume shared =
        Volume.of(
            "s3://bucket/db",
            EnumSet.of(SNAPSHOT),
            StorageOptions.of(Map.of("secret_access_key", "hidden-value")));
    Volume cache = Volume.of("/data/cache", CACHE);
    Volume other = Volume.of("s3://bucket/other-job", READ_ONLY);
    VolumeSet set = VolumeSet.of(List.of(slow, shared, fast, medium, cache, other));
    assertEquals(List.of(fast, medium, slow), set.primaries());
    assertEquals(medium, set.meta());
    assertEquals(Optional.of(shared), set.snapshot());
    assertEquals(Optional.of(cache), set.cache());
    assertEquals(List.of(other), set.readOnly());
    assertTrue(!set.toString().contains("hidden-value"), set.toString());
  }

  @Test
  void metaFallsBackToTheFirstPrimary() {
    Volume low = Volume.of("/a", PRIMARY_LOW);
    Volume high = Volume.of("/b", PRIMARY_HIGH);
    assertEquals(high, VolumeSet.of(List.of(low, high)).meta());
  }

  @Test
  void impossibleCombinationsAreRejected() {
    assertTrue(rejected(List.of()).contains("No volume"));
    assertTrue(
        rejected(List.of(Volume.of("/a", SNAPSHOT), Volume.of("/b", META)))
            .contains("No writable primary"));
    assertTrue(rejected(List.of(Volume.of("/a", READ_ONLY))).contains("No writable primary"));
    String readOnlyPrimary =
        assertThrows(
                IllegalArgumentException.class,
                () -> VolumeSet.of(List.of(Volume.of("/a", READ_ONLY, PRIMARY_HIGH))))
            .getMessage();
    assertTrue(
        readOnlyPrimary.contains("READ_ONLY but also marked [PRIMARY_HIGH]"), readOnlyPrimary);
    assertTrue(
        rejected(List.of(Volume.of("/a", PRIMARY_HIGH), Volume.of("/a/", META)))
            .contains("configured twice"));
    assertTrue(
        rejected(List.of(Volume.of("/a", PRIMARY_HIGH), Volume.of("file:///a", META)))
            .contains("configured twice"));
    assertTrue(
        rejected(List.of(Volume.of("/a", PRIMARY_HIGH), Volume.of("/a/cache", CACHE)))
            .contains("lies inside"));
    assertTrue(rejected(List.of(Volume.of("/a", PRIMARY_HIGH, CACHE))).contains("own directory"));
    assertTrue(
        rejected(List.of(Volume.of("/a", PRIMARY_HIGH), Volume.of("s3://b/cache", CACHE)))
            .contains("must be a local path"));
    assertTrue(
        rejected(List.of(Volume.of("/a", PRIMARY_HIGH, META), Volume.of("/b", PRIMARY_LOW, META)))
            .contains("Only one volume may be META"));
    assertTrue(
        rejected(
                List.of(
                    Volume.of("/a", PRIMARY_HIGH),
                    Volume.of("s3://x/", SNAPSHOT),
                    Volume.of("s3://y/", SNAPSHOT)))
            .contains("Only one volume may be SNAPSHOT"));
    assertThrows(
        IllegalArgumentException.class,
        () -> Volume.of("/a", EnumSet.noneOf(VolumeKind.class), StorageOptions.empty()));
  }

  @Test
  void siblingsWithACommonNamePrefixDoNotOverlap() {
    VolumeSet.of(List.of(Volume.of("/data/db", PRIMARY_HIGH), Volume.of("/data/db2", SNAPSHOT)));
  }
}
