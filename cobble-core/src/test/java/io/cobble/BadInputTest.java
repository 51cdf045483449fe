package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.merge.U64AddOperator;
import io.cobble.schema.ColumnSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every invalid input fails with a message naming the bad value and what is allowed. */
class BadInputTest {
  @TempDir Path dir;

  private static void fails(Class<? extends Throwable> type, Executable e, String... parts) {
    Throwable t = assertThrows(type, e);
    for (String p : parts) {
      assertTrue(t.getMessage().contains(p), "'" + t.getMessage() + "' should mention '" + p + "'");
    }
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "total-buckets|0|1..65536",
        "total-buckets|65537|1..65536",
        "total-buckets|many|integer",
        "memtable.type|btree|skiplist, hash, vec, adaptive",
        "memtable.capacity|12qb|64mb",
        "memtable.capacity|1kb|4kb",
        "memory.memtable-buffer-count|1|2..64",
        "compaction.policy|fifo|round_robin, min_overlap, score_priority",
        "compaction.l0-file-limit|0|1..1000",
        "compaction.write-stall-limit|3|4..",
        "compaction.threads|0|1..256",
        "compaction.subcompactions|0|1..256",
        "compaction.subcompactions|two|integer",
        "compaction.read-ahead.enabled|yes|true, false",
        "compaction.level-size-multiplier|1|2..1000",
        "sst.bloom-filter.bits-per-key|0|1..64",
        "sst.pinned-metadata.max-level|-2|-1..6",
        "sst.read-metadata-cache.mode|sometimes|eager, lazy, off",
        "sst.compression|zstd|none, lz4",
        "sst.merge-family-compression|none,snappy|same, or none, lz4",
        "sst.merge-family-compression|same,lz4|same, or none, lz4",
        "sst.block-size|10|256..",
        "sst.merge-family-block-size|10|256..",
        "sst.merge-family-block-size|large|size",
        "value-separation.threshold|-1|size",
        "row-cache.size|-1|size",
        "row-cache.size|2tb|0..1tb",
        "ttl.default|soon|ms, s, m, h, d",
        "bucket-ranges|5-2|lo-hi",
      })
  void invalidConfigValuesNameKeyValueAndAllowed(String key, String value, String allowed) {
    fails(
        IllegalArgumentException.class,
        () -> Config.builder().set(key, value).build(),
        key,
        allowed);
  }

  @Test
  void writeStallLimitDefaultsAndValidation() {
    Config c = Config.builder().set("compaction.l0-file-limit", 40).build();
    assertTrue(c.writeStallLimit() == 42);
    assertTrue(Config.defaults().writeStallLimit() == 32);
    fails(
        IllegalArgumentException.class,
        () ->
            Config.builder()
                .set("compaction.l0-file-limit", 10)
                .set("compaction.write-stall-limit", 11)
                .build(),
        "compaction.write-stall-limit",
        "12");
  }

  @Test
  void unknownKeysAndBadYamlAreRejected() throws Exception {
    fails(
        IllegalArgumentException.class,
        () -> Config.builder().set("memtable.kind", "x"),
        "memtable.kind",
        "known keys");
    Path yaml = dir.resolve("c.yaml");
    Files.write(yaml, "memtable:\n  type: hash\n  bogus: 1\n".getBytes(UTF_8));
    fails(IllegalArgumentException.class, () -> Config.fromYaml(yaml), "memtable.bogus");
    fails(IllegalArgumentException.class, () -> Config.fromYamlString("- a\n- b\n"), "mapping");
  }

  @Test
  void badBucketsFamiliesColumnsAndOperands() {
    Config config = Config.builder().set("total-buckets", 8).set("bucket-ranges", "0-3").build();
    try (Db db = Db.open(dir, config)) {
      db.createFamily("f", Arrays.asList(ColumnSpec.of("a"), ColumnSpec.merging("n", "u64_add")));
      byte[] k = "k".getBytes(UTF_8);
      fails(IllegalArgumentException.class, () -> db.put(8, "f", k, 0, k), "bucket 8", "0..7");
      fails(IllegalArgumentException.class, () -> db.put(-1, "f", k, 0, k), "bucket -1");
      fails(IllegalArgumentException.class, () -> db.get(5, "f", k), "bucket 5", "0-3");
      fails(
          IllegalArgumentException.class,
          () -> db.put(0, "nope", k, 0, k),
          "'nope'",
          "default",
          "f");
      fails(
          IllegalArgumentException.class,
          () -> db.put(0, "f", k, 2, k),
          "column 2",
          "0..1",
          "[a, n]");
      fails(
          IllegalArgumentException.class,
          () -> db.get(0, "f", k, ReadOptions.columns(5)),
          "column 5");
      fails(IllegalArgumentException.class, () -> db.merge(0, "f", k, 0, k), "no merge operator");
      fails(IllegalArgumentException.class, () -> db.get(0, "f", k, null), "options");
      fails(IllegalArgumentException.class, () -> db.scan(0, "f", null, null, null), "options");
      fails(IllegalArgumentException.class, () -> db.merge(0, "f", k, 1, k), "8 bytes");
      fails(IllegalArgumentException.class, () -> db.put(0, "f", null, 0, k), "key");
      fails(IllegalArgumentException.class, () -> db.put(0, "f", k, 0, null), "value");
      fails(IllegalArgumentException.class, () -> db.put(0, "f", k, 0, k, -5), "ttl -5");
      fails(
          IllegalArgumentException.class,
          () -> db.createFamily("g", Collections.singletonList(ColumnSpec.merging("x", "sum"))),
          "'sum'",
          "concat, u32_add, u64_add");
      fails(
          IllegalArgumentException.class,
          () -> db.createFamily("f", Collections.singletonList(ColumnSpec.of("x"))),
          "'f' already exists");
      fails(IllegalArgumentException.class, () -> db.dropColumn("f", "zz"), "'zz'", "[a, n]");
      fails(
          IllegalArgumentException.class,
          () -> db.addColumn("f", ColumnSpec.of("a")),
          "'a' already exists");
      WriteBatch bad = new WriteBatch().put(0, "f", k, 0, k).put(9, "f", k, 0, k);
      fails(IllegalArgumentException.class, () -> db.write(bad), "bucket 9");
      db.merge(0, "f", k, 1, U64AddOperator.encode(1));
      db.close();
      fails(IllegalStateException.class, () -> db.get(0, "f", k), "closed");
      fails(IllegalStateException.class, () -> db.put(0, "f", k, 0, k), "closed");
      fails(IllegalStateException.class, db::flush, "closed");
    }
  }

  @Test
  void reopenWithDifferentBucketCountOrWhileOpenFails() {
    Config four = Config.builder().set("total-buckets", 4).build();
    try (Db db = Db.open(dir, four)) {
      db.put(1, "default", "k".getBytes(UTF_8), 0, "v".getBytes(UTF_8));
      fails(CobbleException.class, () -> Db.open(dir, four), "already open");
    }
    fails(
        IllegalArgumentException.class,
        () -> Db.open(dir, Config.builder().set("total-buckets", 8).build()),
        "total-buckets 8",
        "4");
  }
}
