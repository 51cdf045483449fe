package io.cobble.benchmarks.engine;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.DbMetrics;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.schema.ColumnSpec;
import io.cobble.util.Bytes;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Single-thread reads over rows shaped like the keyed-state benchmark's ({@code
 * benchmarks/flink-state}): 500,000 {@code Long} keys in the VoidNamespace, as value state (one row
 * per key, an 8-byte value) or map state (10 user keys per key, a null flag and an 8-byte value,
 * with the (key, namespace) prefix filter the backend sets for a map state), two buckets, and the
 * state backend's memory split of its default 128 MB (two 32 MB memtables, a 64 MB block cache).
 * The reads are {@code Db.getColumn} of one row ({@code value}, {@code map}), or per key what a map
 * state's iteration ({@code scan}: a prefix scan read in place, as {@code CobbleMapState} reads it)
 * or its {@code isEmpty} ({@code empty}) asks. Prints where the rows are after the load and the
 * reading thread's CPU nanoseconds and allocated bytes per read for each round, so that two builds
 * can be compared on a shared machine (CPU time leaves out the time a loaded machine deschedules
 * the reader; the Flink layer and JMH are left out too).
 *
 * <p>Run: {@code java -Xms3g -Xmx3g -cp benchmarks.jar io.cobble.benchmarks.engine.StateShapedGets
 * [value|map|scan|empty] [rounds]} (defaults value and 5), the classpath of two builds in turn;
 * {@code -Dcobble.<engine option>=<value>} overrides an engine option, {@code -Dkeys=N} loads N
 * keys instead of 500,000 (a few thousand keep every read in the CPU caches, which separates a
 * read's own work from its memory stalls), {@code -Dflush=true} flushes the memtable after the load
 * so the reads go to tables, {@code -Dsettle=true} waits for compaction to finish after the load
 * (steady state) before the reads, and {@code -Dalternate-clock=true} gives the engine a clock that
 * reads {@code System.currentTimeMillis} in even rounds and returns a constant in odd ones (what a
 * get pays for reading the clock).
 */
public final class StateShapedGets {
  private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
  private static final com.sun.management.ThreadMXBean ALLOC =
      (com.sun.management.ThreadMXBean) CPU;
  private static final int GETS_PER_ROUND = 2_000_000;
  private static final String FAMILY = "state";
  // The (key, namespace) prefix of a map row: varint(8) key varint(1) namespace.
  private static final int MAP_PREFIX = 11;
  // The chunk a map state's iterator reads per scan.
  private static final ScanOptions SCAN_CHUNK = ScanOptions.defaults().maxRows(128);

  private StateShapedGets() {}

  /** The row key the state backend writes: varint(8) key varint(1) namespace [user key]. */
  static byte[] rowKey(long key, boolean map, long userKey) {
    byte[] b = new byte[map ? 19 : 11];
    b[0] = 8;
    putLong(b, 1, key);
    b[9] = 1;
    b[10] = 0;
    if (map) {
      putLong(b, 11, userKey);
    }
    return b;
  }

  private static void putLong(byte[] b, int at, long v) {
    for (int i = 0; i < 8; i++) {
      b[at + i] = (byte) (v >>> (56 - 8 * i));
    }
  }

  public static void main(String[] args) throws Exception {
    String shape = args.length > 0 ? args[0] : "value";
    if (!Arrays.asList("value", "map", "scan", "empty").contains(shape)) {
      throw new IllegalArgumentException(
          "unknown read shape " + shape + ": use value, map, scan or empty");
    }
    boolean map = !shape.equals("value");
    // scan and empty read a key's whole map by its (key, namespace) prefix.
    boolean wholeMap = shape.equals("scan") || shape.equals("empty");
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    int keyCount = Integer.getInteger("keys", 500_000);
    int perKey = map ? 10 : 1;
    Path dir = Files.createTempDirectory("state-shaped-gets");
    Config.Builder builder =
        Config.builder()
            .set("total-buckets", 2)
            .set("memtable.capacity", 32L << 20)
            .set("memory.memtable-buffer-count", 2)
            .set("block-cache.size", 64L << 20);
    // Engine options to try against the state backend's defaults: -Dcobble.<option>=<value>.
    for (String name : System.getProperties().stringPropertyNames()) {
      if (name.startsWith("cobble.")) {
        builder.set(name.substring("cobble.".length()), System.getProperty(name));
      }
    }
    // -Dalternate-clock=true: even rounds read System.currentTimeMillis, odd rounds a constant, so
    // one JVM measures what the engine's clock reads cost a get (both builds alike under load).
    boolean alternateClock = Boolean.getBoolean("alternate-clock");
    boolean[] systemClock = {true};
    if (alternateClock) {
      builder.clock(() -> systemClock[0] ? System.currentTimeMillis() : 1_000_000L);
    }
    Config config = builder.build();
    try (Db db = Db.open(dir, config)) {
      db.createFamily(FAMILY, Collections.singletonList(ColumnSpec.of("value")));
      if (map) {
        // As the state backend sets it for a map state of fixed-length key and namespace.
        db.prefixFilter(FAMILY, MAP_PREFIX);
      }
      SplittableRandom random = new SplittableRandom(1);
      byte[] value = new byte[map ? 9 : 8];
      for (int k = 0; k < keyCount; k++) {
        for (int u = 0; u < perKey; u++) {
          putLong(value, value.length - 8, random.nextLong());
          db.put(k & 1, FAMILY, rowKey(k, map, u), 0, value);
        }
      }
      System.out.println("after the load: " + describe(db.metrics()));
      if (Boolean.getBoolean("flush")) {
        db.flush();
        System.out.println("flushed: " + describe(db.metrics()));
      }
      if (Boolean.getBoolean("settle")) {
        db.waitForCompactions();
        System.out.println("settled: " + describe(db.metrics()));
      }
      long[] keys = new long[GETS_PER_ROUND];
      byte[][] rowKeys = new byte[GETS_PER_ROUND][];
      for (int i = 0; i < GETS_PER_ROUND; i++) {
        keys[i] = random.nextInt(keyCount);
        rowKeys[i] =
            wholeMap
                ? Arrays.copyOf(rowKey(keys[i], true, 0), MAP_PREFIX)
                : rowKey(keys[i], map, random.nextInt(perKey));
      }
      Reads reads = reads(db, shape);
      long expected = shape.equals("scan") ? perKey : 1;
      long found = 0;
      for (int round = 0; round < rounds; round++) {
        systemClock[0] = round % 2 == 0;
        if (alternateClock) {
          System.out.print(systemClock[0] ? "clock=system " : "clock=const  ");
        }
        long self = Thread.currentThread().getId();
        long allocStart = ALLOC.getThreadAllocatedBytes(self);
        long start = CPU.getCurrentThreadCpuTime();
        for (int i = 0; i < GETS_PER_ROUND; i++) {
          found += reads.read((int) (keys[i] & 1), rowKeys[i]);
        }
        long cpu = CPU.getCurrentThreadCpuTime() - start;
        long allocated = ALLOC.getThreadAllocatedBytes(self) - allocStart;
        System.out.printf(
            "round %d: %.1f CPU ns per read, %.1f B allocated per read by the reading thread%n",
            round, cpu / (double) GETS_PER_ROUND, allocated / (double) GETS_PER_ROUND);
      }
      if (found != expected * rounds * GETS_PER_ROUND) {
        throw new IllegalStateException(
            "reads found " + found + " rows, expected " + expected * rounds * GETS_PER_ROUND);
      }
      System.out.println("after the gets: " + describe(db.metrics()));
    } finally {
      deleteTree(dir);
    }
  }

  /** One read of a key's row or rows; returns how many rows it found. */
  private interface Reads {
    long read(int bucket, byte[] key);
  }

  private static Reads reads(Db db, String shape) {
    switch (shape) {
      case "scan":
        return (bucket, prefix) -> {
          long rows = 0;
          try (ScanCursor c =
              db.scan(bucket, FAMILY, prefix, Bytes.successor(prefix), SCAN_CHUNK)) {
            while (c.advance()) {
              rows += c.valueLength(0) > 0 ? 1 : 0;
            }
          }
          return rows;
        };
      case "empty":
        return (bucket, prefix) ->
            db.isEmptyWithPrefix(bucket, FAMILY, prefix, prefix.length) ? 0 : 1;
      default:
        return (bucket, key) -> db.getColumn(bucket, FAMILY, key, 0) != null ? 1 : 0;
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }

  private static String describe(DbMetrics m) {
    return "files per level "
        + Arrays.toString(m.filesPerLevel())
        + ", immutable memtables "
        + m.immutableMemtables()
        + ", memtable bytes "
        + m.memtableBytes()
        + ", block cache hits "
        + m.cacheHits()
        + ", misses "
        + m.cacheMisses();
  }
}
