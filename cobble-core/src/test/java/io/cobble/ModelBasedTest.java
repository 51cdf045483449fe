package io.cobble;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import io.cobble.util.Bytes;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Drives a Db with random operations (put, merge, delete, get, multiGet, scan, flush, compaction,
 * clock advance, schema change, reopen) and compares every read with an in-memory sorted model.
 * Small memtables and tables make flushes and compactions happen thousands of times. The model
 * computes merges with its own semantics ({@link ModelMerges}), never with the production
 * operators.
 */
class ModelBasedTest {
  private static final int OPS = 200_000;
  private static final int BUCKETS = 4;
  private static final long DEFAULT_TTL = 20_000;

  @TempDir Path dir;

  /** A column as the model knows it. */
  private static final class ModelColumn {
    final int id;
    final String name;
    final String operator;
    final byte[] defaultValue;

    ModelColumn(int id, String name, String operator, byte[] defaultValue) {
      this.id = id;
      this.name = name;
      this.operator = operator;
      this.defaultValue = defaultValue;
    }

    boolean elementTtl() {
      return operator != null && operator.contains("element_ttl=true");
    }
  }

  /** A stored cell: value and expiry (element-TTL lists keep expiries per element instead). */
  private static final class Cell {
    final byte[] value;
    final long expiry;
    final List<long[]> elementExpiry;
    final List<byte[]> elements;

    Cell(byte[] value, long expiry) {
      this.value = value;
      this.expiry = expiry;
      this.elements = null;
      this.elementExpiry = null;
    }

    Cell(List<byte[]> elements, List<long[]> elementExpiry) {
      this.value = null;
      this.expiry = 0;
      this.elements = elements;
      this.elementExpiry = elementExpiry;
    }

    boolean alive(long now) {
      return expiry == 0 || expiry > now;
    }
  }

  private static final class ModelFamily {
    final String name;
    final List<ModelColumn> columns = new ArrayList<>();
    int nextColumnId;
    final TreeMap<byte[], Map<Integer, Cell>> rows = new TreeMap<>(Bytes::compare);

    ModelFamily(String name) {
      this.name = name;
    }

    ColumnSpec[] specs() {
      ColumnSpec[] s = new ColumnSpec[columns.size()];
      for (int i = 0; i < s.length; i++) {
        ModelColumn c = columns.get(i);
        s[i] = new ColumnSpec(c.name, c.operator, c.defaultValue);
      }
      return s;
    }

    void add(String name, String op, byte[] def) {
      columns.add(new ModelColumn(nextColumnId++, name, op, def));
    }
  }

  private Random rnd;
  private ManualClock clock;
  private Config config;
  private Db db;
  private final List<ModelFamily> families = new ArrayList<>();
  private int op;
  private long reads;
  private long scans;
  private long flushes;
  private long compactions;

  private void addMetrics() {
    DbMetrics m = db.metrics();
    flushes += m.flushes();
    compactions += m.compactions();
  }

  @ParameterizedTest(name = "seed {0} memtable {1} policy {2}")
  @CsvSource({
    "12, skiplist, min_overlap",
    "2, adaptive, round_robin",
    "3, hash, min_overlap",
    "4, vec, score_priority",
    "10, adaptive, score_priority"
  })
  void randomOperationsMatchModel(long seed, String memtable, String policy) {
    rnd = new Random(seed);
    clock = new ManualClock(1_000_000);
    config =
        Config.builder()
            .set("total-buckets", BUCKETS)
            .set("memtable.type", memtable)
            .set("memtable.capacity", "24kb")
            .set("compaction.policy", policy)
            .set("compaction.l0-file-limit", 2 + rnd.nextInt(3))
            .set("compaction.level-base-size", "48kb")
            .set("compaction.level-size-multiplier", 4)
            .set("compaction.max-levels", 5)
            .set("compaction.threads", 2)
            .set("compaction.read-ahead.enabled", rnd.nextBoolean())
            .set("sst.target-file-size", "16kb")
            .set("sst.block-size", "512b")
            .set("sst.block-restart-interval", 1 + rnd.nextInt(16))
            .set("sst.data-block-hash-index", rnd.nextBoolean())
            .set("sst.bloom-filter.bits-per-key", 1 + rnd.nextInt(12))
            .set("sst.partitioned-index.enabled", rnd.nextBoolean())
            .set("sst.pinned-metadata.max-level", rnd.nextInt(4) - 1)
            .set("sst.pinned-metadata.partitions.enabled", rnd.nextBoolean())
            .set("sst.compression", "none,lz4")
            .set("value-separation.threshold", "48")
            .set("block-cache.size", seed == 2 ? "1mb" : "96kb")
            .set("ttl.default", DEFAULT_TTL + "ms")
            .set("direct-io.enabled", seed == 2)
            .set("fsync.enabled", false)
            .set("direct-io.pool-max-size", 8)
            .clock(clock)
            .build();
    try {
      run();
    } catch (AssertionError | RuntimeException e) {
      throw new AssertionError(
          "model test failed: seed="
              + seed
              + " memtable="
              + memtable
              + " policy="
              + policy
              + " op#="
              + op
              + ": "
              + e.getMessage(),
          e);
    } finally {
      if (db != null) {
        db.close();
      }
    }
  }

  private void run() {
    db = Db.open(dir, config);
    ModelFamily def = new ModelFamily("default");
    def.add("value", null, null);
    families.add(def);
    ModelFamily f0 = new ModelFamily("f0");
    f0.add("plain", null, null);
    f0.add("counter", "u64_add", null);
    f0.add("text", "concat", null);
    f0.add("recent", "list_append:max=5,retain=last,element_ttl=false", null);
    families.add(f0);
    db.createFamily("f0", Arrays.asList(f0.specs()));
    ModelFamily f1 = new ModelFamily("f1");
    f1.add("plain", null, "none".getBytes(StandardCharsets.UTF_8));
    f1.add("hits", "u32_add", ModelMerges.u32(100));
    f1.add("events", "list_append:max=0,retain=last,element_ttl=true", null);
    families.add(f1);
    db.createFamily("f1", Arrays.asList(f1.specs()));

    for (op = 0; op < OPS; op++) {
      int dice = rnd.nextInt(1000);
      if (dice < 300) {
        doPut();
      } else if (dice < 480) {
        doMerge();
      } else if (dice < 530) {
        doDelete();
      } else if (dice < 545) {
        doDeleteRow();
      } else if (dice < 560) {
        doBatch();
      } else if (dice < 800) {
        doGet();
      } else if (dice < 840) {
        doMultiGet();
      } else if (dice < 870) {
        doScan();
      } else if (dice < 995) {
        doGet();
      } else {
        int x = rnd.nextInt(1000);
        if (x < 400) {
          clock.advance(rnd.nextInt(4000));
        } else if (x < 700) {
          db.flush();
        } else if (x < 800) {
          db.waitForCompactions();
        } else if (x < 870) {
          db.compactAll();
        } else if (x < 930) {
          doSchemaChange();
        } else {
          addMetrics();
          db.close();
          db = Db.open(dir, config);
        }
      }
    }
    db.compactAll();
    for (ModelFamily f : families) {
      for (byte[] k : f.rows.keySet().toArray(new byte[0][])) {
        checkRow(f, k, null);
      }
    }
    addMetrics();
    assertTrue(flushes > 100, "flushes " + flushes);
    assertTrue(compactions > 20, "compactions " + compactions);
    assertTrue(reads > OPS / 4 && scans > 100, "reads " + reads + " scans " + scans);
  }

  private ModelFamily family() {
    return families.get(rnd.nextInt(families.size()));
  }

  private byte[] key(int bucket) {
    byte[] k;
    int n = rnd.nextInt(1500);
    if (n < 40) {
      k = new byte[] {(byte) 0xFF, (byte) n, 0};
    } else {
      k =
          String.format("user/%04d/%s", n, n % 3 == 0 ? "x" : "long-suffix-" + (n % 7))
              .getBytes(StandardCharsets.UTF_8);
    }
    byte[] full = new byte[k.length + 2];
    full[0] = (byte) (bucket >>> 8);
    full[1] = (byte) bucket;
    System.arraycopy(k, 0, full, 2, k.length);
    return full;
  }

  private static byte[] userKey(byte[] full) {
    return Arrays.copyOfRange(full, 2, full.length);
  }

  private static int bucketOf(byte[] full) {
    return Bytes.getShort(full, 0);
  }

  private byte[] randomValue() {
    int len = rnd.nextInt(10) < 8 ? rnd.nextInt(40) : 40 + rnd.nextInt(200);
    byte[] v = new byte[len];
    rnd.nextBytes(v);
    return v;
  }

  private long ttl() {
    int x = rnd.nextInt(10);
    if (x < 7) {
      return 0;
    }
    if (x < 8) {
      return WriteBatch.DEFAULT_TTL;
    }
    return 1 + rnd.nextInt(12_000);
  }

  private long expiry(long ttl) {
    long t = ttl == WriteBatch.DEFAULT_TTL ? DEFAULT_TTL : ttl;
    return t == 0 ? 0 : clock.nowMillis() + t;
  }

  private byte[] operand(ModelColumn c) {
    switch (c.operator.split(":")[0]) {
      case "u64_add":
        return ModelMerges.u64(rnd.nextInt(1000) - 100);
      case "u32_add":
        return ModelMerges.u32(rnd.nextInt(50));
      case "concat":
        byte[] b = new byte[rnd.nextInt(30)];
        rnd.nextBytes(b);
        return b;
      default:
        byte[] e = new byte[rnd.nextInt(12)];
        rnd.nextBytes(e);
        return rnd.nextInt(4) == 0
            ? ModelMerges.listEncode(Arrays.asList(e, new byte[] {1, 2}))
            : ModelMerges.listEncode(Arrays.asList(e));
    }
  }

  private byte[] putValue(ModelColumn c) {
    if (c.operator == null) {
      return randomValue();
    }
    return operand(c);
  }

  private void doPut() {
    ModelFamily f = family();
    int bucket = rnd.nextInt(BUCKETS);
    byte[] k = key(bucket);
    int col = rnd.nextInt(f.columns.size());
    ModelColumn c = f.columns.get(col);
    byte[] v = putValue(c);
    long ttl = ttl();
    db.put(bucket, f.name, userKey(k), col, v, ttl);
    modelPut(f, k, c, v, ttl);
  }

  private void modelPut(ModelFamily f, byte[] k, ModelColumn c, byte[] v, long ttl) {
    Map<Integer, Cell> row = f.rows.computeIfAbsent(k, x -> new HashMap<>());
    long e = expiry(ttl);
    if (c.elementTtl()) {
      List<byte[]> els = ModelMerges.listDecode(v);
      List<long[]> exps = new ArrayList<>();
      for (int i = 0; i < els.size(); i++) {
        exps.add(new long[] {e});
      }
      row.put(c.id, new Cell(els, exps));
    } else {
      row.put(c.id, new Cell(v, e));
    }
  }

  private void doMerge() {
    ModelFamily f = families.get(1 + rnd.nextInt(families.size() - 1));
    List<Integer> mergeable = new ArrayList<>();
    for (int i = 0; i < f.columns.size(); i++) {
      if (f.columns.get(i).operator != null) {
        mergeable.add(i);
      }
    }
    if (mergeable.isEmpty()) {
      return;
    }
    int bucket = rnd.nextInt(BUCKETS);
    byte[] k = key(bucket);
    int col = mergeable.get(rnd.nextInt(mergeable.size()));
    ModelColumn c = f.columns.get(col);
    byte[] operand = operand(c);
    long ttl = ttl();
    db.merge(bucket, f.name, userKey(k), col, operand, ttl);
    modelMerge(f, k, c, operand, ttl);
  }

  private void modelMerge(ModelFamily f, byte[] k, ModelColumn c, byte[] operand, long ttl) {
    long now = clock.nowMillis();
    Map<Integer, Cell> row = f.rows.computeIfAbsent(k, x -> new HashMap<>());
    Cell old = row.get(c.id);
    long e = expiry(ttl);
    if (c.elementTtl()) {
      List<byte[]> els = old == null ? new ArrayList<>() : new ArrayList<>(old.elements);
      List<long[]> exps = old == null ? new ArrayList<>() : new ArrayList<>(old.elementExpiry);
      for (byte[] el : ModelMerges.listDecode(operand)) {
        els.add(el);
        exps.add(new long[] {e});
      }
      row.put(c.id, new Cell(els, exps));
      return;
    }
    byte[] base = old != null && old.alive(now) ? old.value : c.defaultValue;
    byte[] v = base == null ? operand : ModelMerges.merge(c.operator, base, operand);
    row.put(c.id, new Cell(v, e));
  }

  private void doDelete() {
    ModelFamily f = family();
    int bucket = rnd.nextInt(BUCKETS);
    byte[] k = key(bucket);
    int col = rnd.nextInt(f.columns.size());
    db.delete(bucket, f.name, userKey(k), col);
    Map<Integer, Cell> row = f.rows.get(k);
    if (row != null) {
      row.remove(f.columns.get(col).id);
    }
  }

  private void doDeleteRow() {
    ModelFamily f = family();
    int bucket = rnd.nextInt(BUCKETS);
    byte[] k = key(bucket);
    db.deleteRow(bucket, f.name, userKey(k));
    f.rows.remove(k);
  }

  private void doBatch() {
    WriteBatch batch = new WriteBatch();
    List<Runnable> model = new ArrayList<>();
    int n = 1 + rnd.nextInt(8);
    for (int i = 0; i < n; i++) {
      ModelFamily f = family();
      int bucket = rnd.nextInt(BUCKETS);
      byte[] k = key(bucket);
      int col = rnd.nextInt(f.columns.size());
      ModelColumn c = f.columns.get(col);
      if (c.operator != null && rnd.nextBoolean()) {
        byte[] operand = operand(c);
        long ttl = ttl();
        batch.merge(bucket, f.name, userKey(k), col, operand, ttl);
        model.add(() -> modelMerge(f, k, c, operand, ttl));
      } else {
        byte[] v = putValue(c);
        long ttl = ttl();
        batch.put(bucket, f.name, userKey(k), col, v, ttl);
        model.add(() -> modelPut(f, k, c, v, ttl));
      }
    }
    db.write(batch);
    model.forEach(Runnable::run);
  }

  private int[] projection(ModelFamily f) {
    if (rnd.nextBoolean()) {
      return null;
    }
    int n = 1 + rnd.nextInt(f.columns.size());
    int[] p = new int[n];
    for (int i = 0; i < n; i++) {
      p[i] = rnd.nextInt(f.columns.size());
    }
    return p;
  }

  /** What a read of the model returns: projected values with defaults, or null. */
  private byte[][] expected(ModelFamily f, byte[] k, int[] projection) {
    long now = clock.nowMillis();
    Map<Integer, Cell> row = f.rows.get(k);
    int n = projection == null ? f.columns.size() : projection.length;
    byte[][] out = new byte[n][];
    boolean any = false;
    for (int i = 0; i < n; i++) {
      ModelColumn c = f.columns.get(projection == null ? i : projection[i]);
      Cell cell = row == null ? null : row.get(c.id);
      if (cell == null) {
        continue;
      }
      if (c.elementTtl()) {
        List<byte[]> live = new ArrayList<>();
        for (int j = 0; j < cell.elements.size(); j++) {
          long e = cell.elementExpiry.get(j)[0];
          if (e == 0 || e > now) {
            live.add(cell.elements.get(j));
          }
        }
        if (!live.isEmpty()) {
          out[i] = ModelMerges.listEncode(live);
          any = true;
        }
      } else if (cell.alive(now)) {
        out[i] = cell.value;
        any = true;
      }
    }
    if (!any) {
      return null;
    }
    for (int i = 0; i < n; i++) {
      if (out[i] == null) {
        out[i] = f.columns.get(projection == null ? i : projection[i]).defaultValue;
      }
    }
    return out;
  }

  private void checkRow(ModelFamily f, byte[] k, int[] projection) {
    byte[][] actual =
        db.get(
            bucketOf(k),
            f.name,
            userKey(k),
            projection == null ? ReadOptions.DEFAULT : ReadOptions.columns(projection));
    assertRow(f, k, expected(f, k, projection), actual);
  }

  private static void assertRow(ModelFamily f, byte[] k, byte[][] expected, byte[][] actual) {
    String where = "family " + f.name + " key " + Arrays.toString(k);
    if (expected == null) {
      assertNull(actual, where + " should be absent");
      return;
    }
    if (actual == null) {
      throw new AssertionError(where + " is missing");
    }
    assertEquals(expected.length, actual.length, where);
    for (int i = 0; i < expected.length; i++) {
      assertArrayEquals(expected[i], actual[i], where + " column " + i);
    }
  }

  private void doGet() {
    reads++;
    ModelFamily f = family();
    checkRow(f, key(rnd.nextInt(BUCKETS)), projection(f));
  }

  private void doMultiGet() {
    reads++;
    ModelFamily f = family();
    int bucket = rnd.nextInt(BUCKETS);
    List<byte[]> keys = new ArrayList<>();
    List<byte[]> full = new ArrayList<>();
    for (int i = 0; i < 1 + rnd.nextInt(10); i++) {
      byte[] k = key(bucket);
      full.add(k);
      keys.add(userKey(k));
    }
    int[] p = projection(f);
    List<byte[][]> got =
        db.multiGet(bucket, f.name, keys, p == null ? ReadOptions.DEFAULT : ReadOptions.columns(p));
    for (int i = 0; i < keys.size(); i++) {
      assertRow(f, full.get(i), expected(f, full.get(i), p), got.get(i));
    }
  }

  private void doScan() {
    scans++;
    ModelFamily f = family();
    int bucket = rnd.nextInt(BUCKETS);
    byte[] a = rnd.nextInt(4) == 0 ? null : key(bucket);
    byte[] b = rnd.nextInt(4) == 0 ? null : key(bucket);
    if (a != null && b != null && Bytes.compare(a, b) > 0) {
      byte[] t = a;
      a = b;
      b = t;
    }
    int[] p = projection(f);
    long max = rnd.nextInt(3) == 0 ? 1 + rnd.nextInt(30) : Long.MAX_VALUE;
    ScanOptions opts = ScanOptions.defaults().maxRows(max);
    if (p != null) {
      opts = opts.columns(p);
    }
    byte[] lo = a != null ? a : new byte[] {(byte) (bucket >>> 8), (byte) bucket};
    NavigableMap<byte[], Map<Integer, Cell>> range =
        b != null
            ? f.rows.subMap(lo, true, b, false)
            : f.rows.subMap(lo, true, Bytes.successor(new byte[] {0, (byte) bucket}), false);
    List<byte[]> expectedKeys = new ArrayList<>();
    for (byte[] k : range.keySet()) {
      if (expected(f, k, p) != null) {
        expectedKeys.add(k);
      }
    }
    List<Row> rows = new ArrayList<>();
    byte[] resume = null;
    boolean paged = rnd.nextBoolean() && max != Long.MAX_VALUE;
    boolean inPlace = rnd.nextBoolean();
    int width = p != null ? p.length : f.columns.size();
    do {
      ScanOptions o = resume == null ? opts : opts.startAfter(resume);
      int before = rows.size();
      try (ScanCursor c =
          db.scan(
              bucket, f.name, a == null ? null : userKey(a), b == null ? null : userKey(b), o)) {
        if (inPlace) {
          while (c.advance()) {
            rows.add(copyInPlace(c, width));
          }
          resume = rows.size() > before ? rows.get(rows.size() - 1).key() : null;
        } else {
          while (c.hasNext()) {
            rows.add(c.next());
          }
          resume = c.lastKey();
        }
      }
      if (!paged || rows.size() == before) {
        break;
      }
    } while (rows.size() < expectedKeys.size());
    int n = paged ? expectedKeys.size() : (int) Math.min(max, expectedKeys.size());
    assertEquals(n, rows.size(), "scan row count in family " + f.name + " bucket " + bucket);
    for (int i = 0; i < n; i++) {
      byte[] k = expectedKeys.get(i);
      assertArrayEquals(userKey(k), rows.get(i).key(), "scan key " + i);
      assertRow(f, k, expected(f, k, p), rows.get(i).columns());
    }
  }

  /** The row {@link ScanCursor#advance} stands on, copied out of the cursor's buffers. */
  static Row copyInPlace(ScanCursor c, int width) {
    byte[] key = Arrays.copyOfRange(c.keyArray(), c.keyOffset(), c.keyOffset() + c.keyLength());
    byte[][] values = new byte[width][];
    for (int i = 0; i < width; i++) {
      values[i] =
          c.valueArray(i) == null
              ? null
              : Arrays.copyOfRange(
                  c.valueArray(i), c.valueOffset(i), c.valueOffset(i) + c.valueLength(i));
    }
    return new Row(key, values);
  }

  private void doSchemaChange() {
    if (families.size() < 6 && rnd.nextInt(5) == 0) {
      ModelFamily created = new ModelFamily("g" + families.size());
      created.add("plain", null, null);
      created.add("total", "u64_add", ModelMerges.u64(1000));
      db.createFamily(created.name, Arrays.asList(created.specs()));
      families.add(created);
      return;
    }
    ModelFamily f = families.get(1 + rnd.nextInt(families.size() - 1));
    if (f.columns.size() > 6 || (f.columns.size() > 2 && rnd.nextBoolean())) {
      int idx = 1 + rnd.nextInt(f.columns.size() - 1);
      ModelColumn c = f.columns.remove(idx);
      db.dropColumn(f.name, c.name);
      for (Map<Integer, Cell> row : f.rows.values()) {
        row.remove(c.id);
      }
    } else {
      String name = "c" + f.nextColumnId;
      int kind = rnd.nextInt(3);
      String op = kind == 0 ? null : kind == 1 ? "u64_add" : "concat";
      byte[] def =
          rnd.nextBoolean()
              ? (kind == 1 ? ModelMerges.u64(7) : "d".getBytes(StandardCharsets.UTF_8))
              : null;
      f.add(name, op, def);
      db.addColumn(f.name, new ColumnSpec(name, op, def));
    }
    Iterator<Map.Entry<byte[], Map<Integer, Cell>>> it = f.rows.entrySet().iterator();
    while (it.hasNext()) {
      if (it.next().getValue().isEmpty()) {
        it.remove();
      }
    }
  }
}
