package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CorruptionException;
import io.cobble.util.ByteReader;
import io.cobble.util.Bytes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The table's {@link PrefixFilter}: which ranges it answers for, that it rules out prefixes the
 * table does not hold (and never one it holds), the format version that marks it, tables without it
 * (versions 1 and 2) still read, a damaged filter block refused by name, and the probes a filter
 * skips while it rules nothing out.
 */
class PrefixFilterTest {
  private static final int PREFIX = 5;

  @TempDir Path dir;

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A 5-byte prefix "pNNN/". */
  private static byte[] prefix(int p) {
    return bytes(String.format("p%03d/", p));
  }

  private static byte[] key(int p, int s) {
    return bytes(String.format("p%03d/%d", p, s));
  }

  /** A table holding the even prefixes below 200, three keys each, plus a key shorter than one. */
  private Path write(String name, TableOptions options) {
    Path path = dir.resolve(name);
    TableBuilder b = new TableBuilder(path, options);
    b.add(bytes("p0"), bytes("short"));
    for (int p = 0; p < 200; p += 2) {
      for (int s = 0; s < 3; s++) {
        b.add(key(p, s), bytes("v" + p + "/" + s));
      }
    }
    b.finish(1, Long.MAX_VALUE, Long.MAX_VALUE, Collections.emptyMap());
    return path;
  }

  private static TableOptions withFilter(boolean partitioned) {
    return TableOptions.builder()
        .blockSize(256)
        .bloomBitsPerKey(10)
        .partitionedIndex(partitioned)
        .prefixFilterLength(PREFIX)
        .build();
  }

  private static Table open(Path path) {
    return Table.open(path, 1, null, TableReadOptions.builder().build());
  }

  private static int version(Path path) throws IOException {
    byte[] file = Files.readAllBytes(path);
    return Bytes.getInt(file, file.length - Footer.SIZE + 24);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void rulesOutAbsentPrefixesAndNeverAPresentOne(boolean partitioned) throws IOException {
    Path path = write("000001.sst", withFilter(partitioned));
    assertEquals(3, version(path), "a table with a prefix filter is format version 3");
    try (Table t = open(path)) {
      assertEquals(PREFIX, t.prefixFilterLength());
      int ruledOut = 0;
      for (int p = 0; p < 200; p++) {
        boolean may = t.mayHoldRange(prefix(p), Bytes.successor(prefix(p)));
        if (p % 2 == 0) {
          assertTrue(may, "a held prefix must never be ruled out: " + p);
          assertTrue(t.mayHoldRange(key(p, 1), Bytes.successor(prefix(p))), "resumed scan " + p);
        } else if (!may) {
          ruledOut++;
        }
      }
      // About 1 % false positives at 10 bits per prefix; a filter that always says "maybe" fails.
      assertTrue(ruledOut >= 90, "absent prefixes ruled out: " + ruledOut + " of 100");
      // Ranges that do not lie within one prefix are never ruled out.
      assertTrue(t.mayHoldRange(prefix(1), prefix(3)), "two prefixes");
      assertTrue(t.mayHoldRange(bytes("p00"), Bytes.successor(bytes("p00"))), "shorter range");
      assertTrue(t.mayHoldRange(prefix(1), null), "unbounded");
      assertEquals(
          t.mayHoldRange(prefix(1), Bytes.successor(prefix(1))),
          t.mayHoldRange(prefix(1), Bytes.successor(key(1, 5))),
          "a range inside one prefix is answered by its prefix");
      if (!t.mayHoldRange(prefix(1), Bytes.successor(prefix(1)))) {
        assertFalse(
            t.mayHoldRange(key(1, 5), Bytes.successor(key(1, 5))),
            "a narrower range within an absent prefix is ruled out too");
      }
      // The data itself reads as before.
      assertArrayEquals(bytes("v4/2"), t.get(key(4, 2), BloomFilter.hash(key(4, 2))));
      assertArrayEquals(bytes("short"), t.get(bytes("p0"), BloomFilter.hash(bytes("p0"))));
    }
  }

  @Test
  void rangeWithinOnePrefixEdges() {
    byte[] lo = {1, 2, 3};
    assertTrue(PrefixFilter.withinOnePrefix(lo, new byte[] {1, 2, 4}, 3));
    assertTrue(PrefixFilter.withinOnePrefix(lo, new byte[] {1, 2, 3, 9}, 3));
    assertFalse(PrefixFilter.withinOnePrefix(lo, new byte[] {1, 2, 4, 0}, 3));
    assertFalse(PrefixFilter.withinOnePrefix(lo, new byte[] {1, 3}, 3));
    assertTrue(PrefixFilter.withinOnePrefix(new byte[] {1, 2, 3, 7}, new byte[] {1, 2, 4}, 3));
    assertFalse(PrefixFilter.withinOnePrefix(new byte[] {1, 2}, new byte[] {1, 3}, 3));
    // A prefix ending in 0xFF: its successor is shorter.
    byte[] ff = {1, (byte) 0xFF, (byte) 0xFF};
    assertTrue(PrefixFilter.withinOnePrefix(ff, new byte[] {2}, 3));
    assertFalse(PrefixFilter.withinOnePrefix(ff, new byte[] {2, 0}, 3));
    byte[] all = {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF};
    assertFalse(PrefixFilter.withinOnePrefix(all, new byte[] {(byte) 0xFF, (byte) 0xFF, 0}, 3));
    assertFalse(PrefixFilter.withinOnePrefix(lo, null, 3));
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void tablesWithoutAPrefixFilterStillRead(boolean hashIndex) throws IOException {
    Path path =
        write(
            "000002.sst",
            TableOptions.builder().blockSize(256).dataBlockHashIndex(hashIndex).build());
    assertEquals(hashIndex ? 2 : 1, version(path), "no filter keeps the older format version");
    try (Table t = open(path)) {
      assertEquals(0, t.prefixFilterLength());
      assertTrue(t.mayHoldRange(prefix(1), Bytes.successor(prefix(1))));
      assertArrayEquals(bytes("v6/1"), t.get(key(6, 1), BloomFilter.hash(key(6, 1))));
    }
  }

  /** How many of {@code queries} absent prefixes (1, 3, 5, ...) the table rules out. */
  private static int ruledOutOfAbsent(Table t, int queries) {
    int ruledOut = 0;
    for (int i = 0; i < queries; i++) {
      int p = 2 * (i % 100) + 1;
      if (!t.mayHoldRange(prefix(p), Bytes.successor(prefix(p)))) {
        ruledOut++;
      }
    }
    return ruledOut;
  }

  @Test
  void aFilterThatRulesNothingOutProbesOnlySamplesUntilItRulesOutAgain() throws IOException {
    Path path = write("000003.sst", withFilter(true));
    try (Table t = open(path)) {
      for (int i = 0; i < FilterUse.WINDOW; i++) {
        int p = 2 * (i % 100);
        assertTrue(t.mayHoldRange(prefix(p), Bytes.successor(prefix(p))), "held prefix " + p);
      }
      // A window that ruled nothing out: the next SAMPLE - 1 ranges are answered unprobed, so
      // absent prefixes that a probe rules out (odd ones, see ruledOutOfAbsent) are not.
      assertEquals(0, ruledOutOfAbsent(t, FilterUse.SAMPLE - 1), "ruled out while sampling");
      // The sample rules its range out, and every range is probed again from then on.
      assertEquals(1, ruledOutOfAbsent(t, 1), "the sampled probe");
      int probed = ruledOutOfAbsent(t, 100);
      assertTrue(probed >= 90, "absent prefixes ruled out after probing resumed: " + probed);
    }
  }

  @Test
  void aFilterThatRulesOutOneRangeInEightKeepsProbingEveryRange() throws IOException {
    Path path = write("000004.sst", withFilter(false));
    try (Table t = open(path)) {
      int absent = 0;
      int ruledOut = 0;
      for (int i = 0; i < 8 * FilterUse.WINDOW; i++) {
        boolean held = i % 8 != 0;
        int p = held ? 2 * (i % 100) : 2 * (i % 100) + 1;
        boolean may = t.mayHoldRange(prefix(p), Bytes.successor(prefix(p)));
        if (held) {
          assertTrue(may, "a held prefix must never be ruled out: " + p);
        } else {
          absent++;
          ruledOut += may ? 0 : 1;
        }
      }
      assertTrue(ruledOut >= absent * 9 / 10, "ruled out " + ruledOut + " of " + absent);
    }
  }

  @Test
  void aFlippedByteInThePrefixFilterIsCorruption() throws IOException {
    Path path = write("000003.sst", withFilter(false));
    byte[] file = Files.readAllBytes(path);
    Footer footer = Footer.decode(Arrays.copyOfRange(file, file.length - Footer.SIZE, file.length));
    BlockHandle props = footer.properties();
    ByteReader r = new ByteReader(file, (int) props.offset(), props.size());
    TableProperties.decode(r);
    assertEquals(PREFIX, r.readVarInt());
    BlockHandle filter = BlockHandle.decode(r);
    assertTrue(filter.size() > 64, "filter block size " + filter.size());
    int at = (int) filter.offset() + filter.size() / 2;
    file[at] ^= 0x10;
    Files.write(path, file);
    CorruptionException e = assertThrows(CorruptionException.class, () -> open(path).close());
    assertTrue(e.getMessage().contains("prefix filter"), e.getMessage());
    assertTrue(e.getMessage().contains(path.toString()), e.getMessage());
  }
}
