package io.cobble.reader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.read.AllocationProbe;
import io.cobble.util.ColumnsSink;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link RowCache} against a model: a cached answer is always the one that was kept for exactly
 * that owner, bucket and key (never another key's, however small the cache and however often its
 * rings wrap), a result just kept is answered, expiring results are not kept, and a hit allocates
 * nothing.
 */
class RowCacheTest {

  /** Collects what a read hands over as "index=bytes" strings. */
  private static final class Collected implements ColumnsSink {
    final List<String> values = new ArrayList<>();

    @Override
    public void accept(int index, byte[] buf, int off, int len) {
      values.add(index + "=" + Arrays.toString(Arrays.copyOfRange(buf, off, off + len)));
    }
  }

  /**
   * The one true result of reading {@code key}: null for no row, else up to three values whose
   * bytes depend on owner, bucket and key, so another key's values never look right.
   */
  private static List<byte[]> truth(long owner, int bucket, byte[] key) {
    Random r = new Random(Arrays.hashCode(key) * 31L + bucket * 1_000_003L + owner);
    if (r.nextInt(5) == 0) {
      return null;
    }
    List<byte[]> values = new ArrayList<>();
    int n = 1 + r.nextInt(3);
    for (int i = 0; i < n; i++) {
      byte[] v = new byte[r.nextInt(120)];
      r.nextBytes(v);
      values.add(v);
    }
    return values;
  }

  private static List<String> expected(List<byte[]> values) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < values.size(); i++) {
      out.add(i * 7 + "=" + Arrays.toString(values.get(i)));
    }
    return out;
  }

  /** Reads {@code key} "from the tables" through a recorder and keeps the result. */
  private static List<String> readThrough(RowCache cache, long owner, int bucket, byte[] key) {
    Collected seen = new Collected();
    RowCache.Recorder recorder = cache.recorder(seen);
    List<byte[]> values = truth(owner, bucket, key);
    if (values != null) {
      for (int i = 0; i < values.size(); i++) {
        recorder.accept(i * 7, values.get(i), 0, values.get(i).length);
      }
    }
    cache.put(owner, bucket, key, recorder, values != null);
    assertEquals(values == null ? List.of() : expected(values), seen.values, "passed on");
    return seen.values;
  }

  @Test
  void cachedAnswersAreAlwaysTheKeysOwnAcrossEvictions() {
    for (long capacity : new long[] {4 << 10, 64 << 10, 300 << 10, 4 << 20}) {
      for (int seed = 1; seed <= 3; seed++) {
        Random random = new Random(seed * 7919L + capacity);
        RowCache cache = new RowCache(capacity);
        long[] owners = {cache.newOwner(), cache.newOwner(), cache.newOwner()};
        byte[][] keys = new byte[600][];
        for (int i = 0; i < keys.length; i++) {
          keys[i] = new byte[1 + random.nextInt(40)];
          random.nextBytes(keys[i]);
        }
        int hits = 0;
        for (int op = 0; op < 30_000; op++) {
          long owner = owners[random.nextInt(owners.length)];
          int bucket = random.nextInt(4);
          byte[] key = keys[(int) Math.abs(random.nextGaussian() * keys.length / 4) % keys.length];
          Collected got = new Collected();
          int answer = cache.read(owner, bucket, key, got);
          List<byte[]> truth = truth(owner, bucket, key);
          if (answer == RowCache.NOT_CACHED) {
            assertTrue(got.values.isEmpty(), "a miss hands nothing over");
            readThrough(cache, owner, bucket, key);
            if (capacity >= 64 << 10) {
              Collected again = new Collected();
              int now = cache.read(owner, bucket, key, again);
              assertEquals(truth == null ? RowCache.ABSENT : RowCache.FOUND, now, "just kept");
              assertEquals(truth == null ? List.of() : expected(truth), again.values);
            }
          } else {
            hits++;
            assertEquals(truth == null ? RowCache.ABSENT : RowCache.FOUND, answer, "op " + op);
            assertEquals(truth == null ? List.of() : expected(truth), got.values, "op " + op);
          }
        }
        assertTrue(cache.usage() <= cache.capacity(), cache.usage() + " > " + cache.capacity());
        if (capacity >= 64 << 10) {
          assertTrue(hits > 3_000, "capacity " + capacity + ": only " + hits + " hits");
        }
      }
    }
  }

  /**
   * Entries whose hashes share their set and tag (found by search) never answer for each other:
   * keys that differ only in their bytes, their bucket or their owner.
   */
  @Test
  @org.junit.jupiter.api.Timeout(60)
  void keysWhoseHashesCollideNeverAnswerForEachOther() {
    // A 64 KiB cache has one stripe of 512 slots: the set is hash bits 3-8, the tag bits 48-63.
    long mask = 0xFFFF_0000_0000_01F8L;
    RowCache cache = new RowCache(64 << 10);
    long owner = cache.newOwner();
    java.util.Map<Long, Integer> seen = new java.util.HashMap<>();
    int a = -1;
    int b = -1;
    for (int i = 0; a < 0; i++) {
      Integer other = seen.putIfAbsent(RowCache.hash(owner, 0, key(i)) & mask, i);
      if (other != null) {
        a = other;
        b = i;
      }
    }
    expectApart(cache, owner, 0, key(a), owner, 0, key(b));

    int bucketA = -1;
    int bucketB = -1;
    int k = 0;
    for (; bucketA < 0; k++) {
      long[] h = new long[8];
      for (int bucket = 0; bucket < 8 && bucketA < 0; bucket++) {
        h[bucket] = RowCache.hash(owner, bucket, key(k)) & mask;
        for (int earlier = 0; earlier < bucket; earlier++) {
          if (h[earlier] == h[bucket]) {
            bucketA = earlier;
            bucketB = bucket;
          }
        }
      }
    }
    expectApart(cache, owner, bucketA, key(k - 1), owner, bucketB, key(k - 1));

    seen.clear();
    long ownerA = -1;
    long ownerB = -1;
    while (ownerA < 0) {
      long o = cache.newOwner();
      Integer other = seen.putIfAbsent(RowCache.hash(o, 0, key(0)) & mask, (int) o);
      if (other != null) {
        ownerA = other;
        ownerB = o;
      }
    }
    expectApart(cache, ownerA, 0, key(0), ownerB, 0, key(0));
  }

  private static void expectApart(
      RowCache cache, long ownerA, int bucketA, byte[] a, long ownerB, int bucketB, byte[] b) {
    readThrough(cache, ownerA, bucketA, a);
    assertEquals(RowCache.NOT_CACHED, cache.read(ownerB, bucketB, b, new Collected()));
    readThrough(cache, ownerB, bucketB, b);
    for (int round = 0; round < 2; round++) {
      Collected gotA = new Collected();
      cache.read(ownerA, bucketA, a, gotA);
      List<byte[]> truthA = truth(ownerA, bucketA, a);
      assertEquals(truthA == null ? List.of() : expected(truthA), gotA.values);
      Collected gotB = new Collected();
      cache.read(ownerB, bucketB, b, gotB);
      List<byte[]> truthB = truth(ownerB, bucketB, b);
      assertEquals(truthB == null ? List.of() : expected(truthB), gotB.values);
    }
  }

  @Test
  void theOldestEntriesLeaveFirst() {
    RowCache cache = new RowCache(64 << 10);
    long owner = cache.newOwner();
    for (int i = 0; i < 5_000; i++) {
      readThrough(cache, owner, 0, key(i));
    }
    assertEquals(RowCache.NOT_CACHED, cache.read(owner, 0, key(0), new Collected()));
    int recent = 0;
    for (int i = 4_900; i < 5_000; i++) {
      recent += cache.read(owner, 0, key(i), new Collected()) != RowCache.NOT_CACHED ? 1 : 0;
    }
    assertTrue(recent >= 95, "of the last 100 keys kept, " + recent + " are cached");
  }

  @Test
  void resultsThatExpireAreNotKept() {
    RowCache cache = new RowCache(1 << 20);
    long owner = cache.newOwner();
    Collected sink = new Collected();
    RowCache.Recorder recorder = cache.recorder(sink);
    recorder.expiring();
    recorder.accept(0, new byte[] {1, 2}, 0, 2);
    cache.put(owner, 0, key(1), recorder, true);
    assertEquals(RowCache.NOT_CACHED, cache.read(owner, 0, key(1), new Collected()));
    assertEquals(List.of("0=[1, 2]"), sink.values, "still passed on");
    readThrough(cache, owner, 0, key(1));
    assertTrue(cache.read(owner, 0, key(1), new Collected()) != RowCache.NOT_CACHED);
  }

  @Test
  void aHitAllocatesNothing() {
    RowCache cache = new RowCache(1 << 20);
    long owner = cache.newOwner();
    byte[][] keys = new byte[200][];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = key(i);
      readThrough(cache, owner, 1, keys[i]);
    }
    long[] sum = new long[1];
    ColumnsSink counting = (index, buf, off, len) -> sum[0] += len + index;
    long bytes =
        AllocationProbe.allocatedBy(
            () -> {
              for (int round = 0; round < 50; round++) {
                for (byte[] k : keys) {
                  cache.read(owner, 1, k, counting);
                }
              }
            });
    assertTrue(sum[0] > 0);
    assertTrue(bytes < 10_000, bytes + " bytes allocated by 10,000 cached reads");
  }

  private static byte[] key(int i) {
    return ("key-" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }
}
