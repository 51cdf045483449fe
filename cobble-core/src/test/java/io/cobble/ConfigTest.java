package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigTest {
  @TempDir Path dir;

  @Test
  void defaultsAreDocumentedValues() {
    Config c = Config.defaults();
    assertEquals(MemTableType.ADAPTIVE, c.memtableType());
    assertEquals(CompactionPolicy.SCORE_PRIORITY, c.compactionPolicy());
    assertEquals(2, c.l0FileLimit());
    assertEquals(32, c.writeStallLimit());
    assertEquals(4, c.compactionThreads());
    assertEquals(2, c.memtableBufferCount());
    assertEquals(4096, c.blockSize());
    assertEquals(10, c.bloomBitsPerKey());
    assertEquals(1024, c.valueSeparationThreshold());
    assertEquals(2, c.pinnedMetadataMaxLevel());
    assertEquals(MetadataCacheMode.EAGER, c.metadataCacheMode());
    assertTrue(c.bloomFilterEnabled() && c.partitionedIndex() && c.readAheadEnabled());
    assertFalse(c.lz4ForLevel(0, false));
    assertTrue(c.lz4ForLevel(5, false));
    assertFalse(c.lz4ForLevel(0, true), "merge families follow sst.compression by default");
    assertTrue(c.lz4ForLevel(5, true));
    assertEquals(0, c.defaultTtlMillis());
    assertEquals(Config.defaultValues().keySet(), c.values().keySet());
  }

  @Test
  void loadsNestedAndFlatYamlWithSizesAndDurations() throws Exception {
    Path f = dir.resolve("cobble.yaml");
    Files.write(
        f,
        ("total-buckets: 128\n"
                + "bucket-ranges: 0-15, 64-127\n"
                + "memtable:\n"
                + "  type: hash\n"
                + "  capacity: 8 MiB\n"
                + "compaction.l0-file-limit: 4\n"
                + "compaction:\n"
                + "  policy: round_robin\n"
                + "  read-ahead:\n"
                + "    enabled: false\n"
                + "sst.bloom-filter.bits-per-key: 12\n"
                + "value-separation.threshold: 2kb\n"
                + "ttl.default: 90s\n")
            .getBytes(UTF_8));
    Config c = Config.fromYaml(f);
    assertEquals(128, c.totalBuckets());
    assertTrue(c.ownsBucket(15) && c.ownsBucket(64) && !c.ownsBucket(16));
    assertEquals(MemTableType.HASH, c.memtableType());
    assertEquals(8L << 20, c.memtableCapacity());
    assertEquals(4, c.l0FileLimit());
    assertEquals(32, c.writeStallLimit());
    assertEquals(CompactionPolicy.ROUND_ROBIN, c.compactionPolicy());
    assertFalse(c.readAheadEnabled());
    assertEquals(12, c.bloomBitsPerKey());
    assertEquals(2048, c.valueSeparationThreshold());
    assertEquals(90_000, c.defaultTtlMillis());
  }
}
