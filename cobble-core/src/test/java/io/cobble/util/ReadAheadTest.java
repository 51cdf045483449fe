package io.cobble.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReadAheadTest {
  @TempDir Path dir;

  @Test
  void hintsWorkOnLinuxAndAreHarmlessOnMissingFiles() throws Exception {
    Path f = dir.resolve("data");
    Files.write(f, new byte[1 << 20]);
    if (System.getProperty("os.name").toLowerCase(Locale.ROOT).contains("linux")) {
      assertTrue(ReadAhead.nativeAvailable(), "JNA posix_fadvise should load on Linux");
    }
    try (ReadAhead h = ReadAhead.open(f)) {
      h.willNeed(0, 1 << 20);
      h.willNeed(1 << 19, 1 << 20);
    }
    try (ReadAhead h = ReadAhead.open(dir.resolve("missing"))) {
      h.willNeed(0, 10);
    }
    assertEquals(1 << 20, Files.size(f));
  }

  @Test
  void sizesParseUnitsAndRejectGarbage() {
    assertEquals(64L << 20, Sizes.parse("k", "64mb"));
    assertEquals(4096, Sizes.parse("k", "4 KiB"));
    assertEquals(1536, Sizes.parse("k", "1.5kb"));
    assertEquals(7, Sizes.parse("k", "7"));
    try {
      Sizes.parse("some.key", "12 parsecs");
      throw new AssertionError("expected failure");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage().contains("some.key") && e.getMessage().contains("12 parsecs"));
    }
  }
}
