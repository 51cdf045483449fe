package io.cobble.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StorageOptionsTest {

  @Test
  void suffixesArePassedThroughUnchangedIncludingDots() {
    StorageOptions options =
        StorageOptions.fromConfiguration(
            Map.of(
                "storage.option.fs.azure.account.key.myaccount", "k",
                "storage.option.endpoint", "https://s3.example.com",
                "path", "s3://b/p",
                "storage.optionX", "not an option"));
    assertEquals(
        Map.of("fs.azure.account.key.myaccount", "k", "endpoint", "https://s3.example.com"),
        options.asMap());
  }

  @Test
  void explicitOptionsOverrideDefaults() {
    StorageOptions defaults = StorageOptions.of(Map.of("region", "eu-west-1", "endpoint", "a"));
    StorageOptions table = StorageOptions.of(Map.of("region", "us-east-1"));
    StorageOptions merged = defaults.overriddenBy(table);
    assertEquals(Optional.of("us-east-1"), merged.get("region"));
    assertEquals(Optional.of("a"), merged.get("endpoint"));
  }

  @Test
  void unknownKeysAreRejectedWithTheAcceptedOnes() {
    StorageOptions options = StorageOptions.of(Map.of("regoin", "x", "endpoint", "y"));
    IllegalArgumentException failure =
        assertThrows(
            IllegalArgumentException.class,
            () -> options.requireOnly("s3", Set.of("endpoint", "region")));
    assertEquals(
        "Unknown storage option 'regoin' for the 's3' storage provider. Accepted keys (set as"
            + " storage.option.<key>): endpoint, region.",
        failure.getMessage());
    options.requireOnly("s3", Set.of("endpoint", "region", "regoin"));
  }

  @Test
  void toStringHidesValues() {
    String text = StorageOptions.of(Map.of("secret_access_key", "s3cr3t")).toString();
    assertFalse(text.contains("s3cr3t"), text);
    assertTrue(text.contains("secret_access_key"), text);
  }

  @Test
  void nullsAndEmptyKeysAreRejected() {
    assertThrows(IllegalArgumentException.class, () -> StorageOptions.of(Map.of("", "v")));
    HashMap<String, String> withNull = new HashMap<>();
    withNull.put("k", null);
    assertThrows(IllegalArgumentException.class, () -> StorageOptions.of(withNull));
  }
}
