package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EngineOptionsTest {

  private static final Path README = Paths.get("..", "README.md");
  private static final String START = "<!-- engine-options:start -->\n";
  private static final String END = "<!-- engine-options:end -->";

  /**
   * The README's option table is generated from the definitions. Run with {@code
   * -Dcobble.docs.update=true} to rewrite it after changing an option.
   */
  @Test
  void readmeTableIsTheDefinitions() throws Exception {
    String generated = EngineOptions.markdownTable();
    if (Boolean.getBoolean("cobble.docs.update")) {
      String readme = readmeAround();
      int from = readme.indexOf(START) + START.length();
      readme = readme.substring(0, from) + generated + readme.substring(readme.indexOf(END));
      Files.write(README, readme.getBytes(UTF_8));
    }
    String readme = readmeAround();
    assertEquals(
        generated,
        readme.substring(readme.indexOf(START) + START.length(), readme.indexOf(END)),
        "README.md's engine option table differs from EngineOptions; regenerate it with"
            + " mvn -pl cobble-core test -Dtest=EngineOptionsTest -Dcobble.docs.update=true");
  }

  private static String readmeAround() throws Exception {
    String readme = new String(Files.readAllBytes(README), UTF_8);
    int start = readme.indexOf(START);
    assertTrue(
        start >= 0 && readme.indexOf(END) > start, "README.md lacks the engine-options markers");
    return readme;
  }

  @Test
  void everyKeyIsDeclaredOnceAndItsDefaultIsWhatConfigUses() {
    Set<String> keys = new HashSet<>();
    Config defaults = Config.defaults();
    for (EngineOption<?> option : EngineOptions.all()) {
      assertTrue(keys.add(option.key()), "declared twice: " + option.key());
      assertEquals(option.defaultValue(), defaults.values().get(option.key()), option.key());
      assertEquals(option, EngineOptions.find(option.key()).orElseThrow());
    }
    assertEquals(keys, defaults.values().keySet());
  }

  @Test
  void everyDefaultParsesAndFormatsBackToTheSameValue() {
    for (EngineOption<?> option : EngineOptions.all()) {
      if (!option.derivedDefault()) {
        assertRoundTrip(option);
      }
    }
    assertTrue(EngineOptions.WRITE_STALL_LIMIT.derivedDefault());
  }

  private static <T> void assertRoundTrip(EngineOption<T> option) {
    T value = option.parse(option.defaultValue());
    assertEquals(value, option.parse(option.format(value)), option.key());
  }

  @Test
  void typedValuesMatchTheAccessors() {
    Config c =
        Config.builder()
            .set(EngineOptions.BLOCK_CACHE_SIZE, 3L << 20)
            .set(EngineOptions.MEMTABLE_TYPE, MemTableType.HASH)
            .set(EngineOptions.BLOOM_FILTER_ENABLED, false)
            .set(EngineOptions.DEFAULT_TTL, 90_000L)
            .set(EngineOptions.L0_FILE_LIMIT, 40)
            .build();
    assertEquals(3L << 20, c.blockCacheSize());
    assertEquals(3L << 20, c.get(EngineOptions.BLOCK_CACHE_SIZE));
    assertEquals(MemTableType.HASH, c.memtableType());
    assertEquals(false, c.bloomFilterEnabled());
    assertEquals(90_000L, c.defaultTtlMillis());
    assertEquals(42, c.get(EngineOptions.WRITE_STALL_LIMIT), "derived: l0-file-limit + 2");
    assertEquals(32, Config.defaults().get(EngineOptions.WRITE_STALL_LIMIT));
  }

  @Test
  void outOfRangeValuesNameTheKeyAndTheRange() {
    for (EngineOption<?> option : EngineOptions.all()) {
      if (option.type() == EngineOption.Type.INTEGER && option.max() < Integer.MAX_VALUE) {
        IllegalArgumentException e =
            assertThrows(
                IllegalArgumentException.class,
                () -> Config.builder().set(option.key(), option.max() + 1).build(),
                option.key());
        assertTrue(e.getMessage().contains(option.key()), e.getMessage());
        assertTrue(e.getMessage().contains("allowed range is "), e.getMessage());
      }
      if (option.type() == EngineOption.Type.SIZE) {
        IllegalArgumentException e =
            assertThrows(
                IllegalArgumentException.class,
                () -> Config.builder().set(option.key(), option.max() + 1).build(),
                option.key());
        assertTrue(
            e.getMessage()
                .contains(
                    option.key()
                        + ": allowed range is "
                        + io.cobble.util.Sizes.format(option.min())
                        + ".."
                        + io.cobble.util.Sizes.format(option.max())),
            e.getMessage());
      }
    }
  }

  @Test
  void limitsThatDependOnOtherKeysAreChecked() {
    IllegalArgumentException stall =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                Config.builder()
                    .set(EngineOptions.L0_FILE_LIMIT, 10)
                    .set(EngineOptions.WRITE_STALL_LIMIT.key(), 11)
                    .build());
    assertTrue(
        stall.getMessage().contains("compaction.write-stall-limit: allowed range is 12..100000"),
        stall.getMessage());
    IllegalArgumentException pinned =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                Config.builder()
                    .set(EngineOptions.MAX_LEVELS, 3)
                    .set(EngineOptions.PINNED_METADATA_MAX_LEVEL, 3)
                    .build());
    assertTrue(
        pinned.getMessage().contains("sst.pinned-metadata.max-level: allowed range is -1..2"),
        pinned.getMessage());
  }

  @Test
  void enumAndBooleanErrorsListWhatIsAllowed() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> Config.builder().set("memtable.type", "tree").build());
    assertEquals(
        "invalid value 'tree' for memtable.type: allowed are "
            + EngineOptions.MEMTABLE_TYPE.allowedValues(),
        e.getMessage());
    assertThrows(
        IllegalArgumentException.class, () -> Config.builder().set("fsync.enabled", "yes").build());
  }

  @Test
  void aPrefixedMapSetsTheEngineKeysUnderThePrefixOnly() {
    String prefix = "state.backend.cobble.";
    Map<String, String> flink = new HashMap<>();
    flink.put(prefix + EngineOptions.MEMTABLE_TYPE.key(), "skiplist");
    flink.put(prefix + EngineOptions.L0_FILE_LIMIT.key(), "5");
    flink.put(prefix + "localdir", "/tmp/not-an-engine-key");
    flink.put(EngineOptions.BLOCK_CACHE_SIZE.key(), "1mb");
    flink.put("state.backend.type", "cobble");
    Config c = Config.fromPrefixed(flink, prefix);
    assertEquals(MemTableType.SKIPLIST, c.memtableType());
    assertEquals(5, c.l0FileLimit());
    assertEquals(64L << 20, c.blockCacheSize(), "an unprefixed key is not the engine's");

    flink.put(prefix + EngineOptions.BLOCK_SIZE.key(), "3");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Config.fromPrefixed(flink, prefix));
    assertTrue(e.getMessage().contains("sst.block-size"), e.getMessage());
  }
}
