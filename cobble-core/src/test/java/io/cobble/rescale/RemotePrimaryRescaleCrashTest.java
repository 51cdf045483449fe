package io.cobble.rescale;

import static io.cobble.rescale.RemotePrimaryRescaleTest.BUCKETS;
import static io.cobble.rescale.RemotePrimaryRescaleTest.KEYS;
import static io.cobble.rescale.RemotePrimaryRescaleTest.config;
import static io.cobble.rescale.RemotePrimaryRescaleTest.key;
import static io.cobble.rescale.RemotePrimaryRescaleTest.range;
import static io.cobble.rescale.RemotePrimaryRescaleTest.value;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.ChildJvm;
import io.cobble.CobbleException;
import io.cobble.Db;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.S3ProxyServer;
import io.cobble.version.FileMeta;
import io.cobble.version.OwnedRanges;
import io.cobble.version.RemotePrimary;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import io.cobble.version.VersionSet;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills (SIGKILL) a child JVM that restores, shrinks and expands a shard on a remote primary volume
 * (S3Proxy, signature authentication, 127.0.0.1) in a loop, at random moments, then reopens the
 * primary from an empty local directory. Whatever the moment, the primary holds exactly one of the
 * states the child's steps produce (an interrupted restore instead refuses every open until the
 * restore runs again), with no object outside its live files, and takes writes again.
 *
 * <p>The child's steps: restore shard {@code a} (buckets 0-7) and sometimes shrink to 0-1; expand
 * from shards {@code b} (0-3) and {@code c} (4-7); restore {@code b} and grow the live shard by
 * {@code c}'s buckets through its snapshot manager. The seed is printed; replay with {@code
 * -Dcobble.remote-rescale-crash.seed=<seed>}, and run more kills with {@code
 * -Dcobble.remote-rescale-crash.iterations=<n>} (default 2).
 */
// Bounds a run of many iterations on a loaded machine (one takes up to ~40 s there); every wait
// inside is bounded on its own.
@Timeout(3600)
class RemotePrimaryRescaleCrashTest {
  private static final String ENDPOINT = "COBBLE_TEST_S3_ENDPOINT";
  private static final String ACCESS_KEY = "COBBLE_TEST_S3_ACCESS_KEY";
  private static final String SECRET_KEY = "COBBLE_TEST_S3_SECRET_KEY";
  private static final long START_DEADLINE_MS = 120_000;

  /** The states a step can leave: owned ranges to the generation of each bucket. */
  private static final Map<String, String> STATES = new LinkedHashMap<>();

  static {
    STATES.put("0-7", "aaaaaaaa");
    STATES.put("0-1", "aa");
    STATES.put("0-3", "bbbb");
  }

  @TempDir Path tmp;

  /** The credentials reach the child in its environment: never on a command line or in a file. */
  private static Map<String, String> options(String endpoint, String access, String secret) {
    Map<String, String> o = new LinkedHashMap<>();
    o.put("endpoint", endpoint);
    o.put("region", "us-east-1");
    o.put("access_key_id", access);
    o.put("secret_access_key", secret);
    o.put("enable_virtual_host_style", "false");
    return o;
  }

  private static Storage open(Map<String, String> options, String prefix) throws Exception {
    return StorageProviders.open(URI.create("s3://vol/" + prefix), StorageOptions.of(options));
  }

  private static ShardOpenRequest request(
      Storage volume, Storage primary, Path work, List<BucketRange> ranges, ShardRef... sources) {
    return ShardOpenRequest.builder(volume, work, "t", config())
        .primary(primary)
        .ranges(ranges)
        .sources(List.of(sources))
        .build();
  }

  /**
   * Child: args = work directory, ready marker, seed, then the ids of snapshots a, b and c. It
   * creates the marker once connected, and {@code <marker>.<n>} when its step {@code n} ended.
   */
  public static void main(String[] args) throws Exception {
    Path work = Path.of(args[0]);
    Random random = new Random(Long.parseLong(args[2]));
    ShardRef a = ShardRef.of("a", Long.parseLong(args[3]));
    ShardRef b = ShardRef.of("b", Long.parseLong(args[4]));
    ShardRef c = ShardRef.of("c", Long.parseLong(args[5]));
    Map<String, String> options =
        options(System.getenv(ENDPOINT), System.getenv(ACCESS_KEY), System.getenv(SECRET_KEY));
    try (Storage volume = open(options, "snapshots");
        Storage primary = open(options, "primary/t")) {
      Files.createFile(Path.of(args[1]));
      for (int done = 0; ; done++) {
        int step = random.nextInt(3);
        if (step == 0) {
          try (Db db = ShardOpener.open(request(volume, primary, work, range(0, 7), a)).db()) {
            if (random.nextBoolean()) {
              db.shrinkBuckets(new int[] {0, 1});
            }
          }
        } else if (step == 1) {
          ShardOpener.open(request(volume, primary, work, range(0, 7), b, c)).db().close();
        } else {
          try (Db db = ShardOpener.open(request(volume, primary, work, range(0, 3), b)).db();
              SnapshotManager snapshots = SnapshotManager.open(db, volume, "t")) {
            Rescale.expandBuckets(snapshots, List.of(c), range(4, 7));
          }
        }
        Files.createFile(Path.of(args[1] + "." + done));
      }
    }
  }

  @Test
  void killsDuringRestoreShrinkAndExpansionLeaveOneWholeState() throws Exception {
    int iterations = Integer.getInteger("cobble.remote-rescale-crash.iterations", 2);
    long seed = Long.getLong("cobble.remote-rescale-crash.seed", System.nanoTime());
    System.out.println(
        "RemotePrimaryRescaleCrashTest seed "
            + seed
            + " (replay: -Dcobble.remote-rescale-crash.seed="
            + seed
            + ")");
    Random random = new Random(seed);
    try (S3ProxyServer server = S3ProxyServer.start(tmp.resolve("s3"), "vol")) {
      Map<String, String> options =
          options(server.endpoint().toString(), server.accessKey(), server.secretKey());
      ShardRef a;
      ShardRef b;
      ShardRef c;
      try (Storage volume = open(options, "snapshots")) {
        a =
            RemotePrimaryRescaleTest.snapshotShard(
                tmp.resolve("wa"), volume, "a", range(0, 7), "a");
        b =
            RemotePrimaryRescaleTest.snapshotShard(
                tmp.resolve("wb"), volume, "b", range(0, 3), "b");
        c =
            RemotePrimaryRescaleTest.snapshotShard(
                tmp.resolve("wc"), volume, "c", range(4, 7), "c");
      }
      // Some state exists before the first kill, as after any earlier run.
      expandInParent(options, a, b, c);
      Set<String> seen = new HashSet<>();
      for (int it = 0; it < iterations; it++) {
        Path ready = tmp.resolve("ready-" + it);
        ProcessBuilder pb =
            ChildJvm.withHeap(
                "256m",
                RemotePrimaryRescaleCrashTest.class,
                tmp.resolve("child-work").toString(),
                ready.toString(),
                String.valueOf(random.nextLong()),
                String.valueOf(a.snapshotId()),
                String.valueOf(b.snapshotId()),
                String.valueOf(c.snapshotId()));
        pb.environment().put(ENDPOINT, server.endpoint().toString());
        pb.environment().put(ACCESS_KEY, server.accessKey());
        pb.environment().put(SECRET_KEY, server.secretKey());
        Process child =
            pb.redirectErrorStream(true)
                .redirectOutput(tmp.resolve("child-" + it + ".log").toFile())
                .start();
        try {
          // Kill at a random moment inside a step, whatever a step takes on this machine: wait
          // for the first (or second) step to end, then for a part of the time the first took.
          awaitFile(child, ready, it);
          long started = System.nanoTime();
          awaitFile(child, Path.of(ready + ".0"), it);
          long stepMillis = (System.nanoTime() - started) / 1_000_000;
          if (random.nextBoolean()) {
            awaitFile(child, Path.of(ready + ".1"), it);
          }
          Thread.sleep(random.nextInt((int) Math.max(1, stepMillis * 6 / 5)));
          assertTrue(child.isAlive(), "child died on its own: see child-" + it + ".log");
        } finally {
          child.destroyForcibly();
          assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child " + it + " did not end");
        }
        String state = verify(options, a, b, c, it);
        System.out.println("RemotePrimaryRescaleCrashTest kill " + it + ": " + state);
        seen.add(state);
      }
      System.out.println("RemotePrimaryRescaleCrashTest states after kills: " + seen);
    }
  }

  /** Waits for the child to create {@code file}, failing if it dies or takes too long. */
  private static void awaitFile(Process child, Path file, int it) throws Exception {
    long deadline = System.currentTimeMillis() + START_DEADLINE_MS;
    while (!Files.exists(file)) {
      assertTrue(child.isAlive(), "child died on its own: see child-" + it + ".log");
      assertTrue(
          System.currentTimeMillis() < deadline,
          "child " + it + " did not create " + file + " within " + START_DEADLINE_MS + " ms");
      Thread.sleep(20);
    }
  }

  private void expandInParent(Map<String, String> options, ShardRef a, ShardRef b, ShardRef c)
      throws Exception {
    try (Storage volume = open(options, "snapshots");
        Storage primary = open(options, "primary/t")) {
      Path work = tmp.resolve("parent-work");
      try (Db db = ShardOpener.open(request(volume, primary, work, range(0, 7), b, c)).db()) {
        checkState(db, "0-7", "bbbbcccc");
      }
    }
  }

  /** Checks what the killed child left; returns the state found. */
  private String verify(Map<String, String> options, ShardRef a, ShardRef b, ShardRef c, int it)
      throws Exception {
    Path elsewhere = tmp.resolve("elsewhere-" + it);
    try (Storage primary = open(options, "primary/t")) {
      if (RemotePrimary.restoring(primary)) {
        CobbleException e =
            assertThrows(CobbleException.class, () -> Db.open(primary, elsewhere, config()));
        assertTrue(e.getMessage().contains("interrupted restore"), e.getMessage());
        expandInParent(options, a, b, c);
        return "interrupted restore";
      }
      String state;
      try (Db db = Db.open(primary, elsewhere, config())) {
        String ranges = OwnedRanges.format(db.ownedBucketRanges());
        state = ranges + " " + generations(db);
        // 0-7 is either restored shard a or the union of b and c.
        String gens = state.equals("0-7 bbbbcccc") ? "bbbbcccc" : STATES.get(ranges);
        assertNotNull(gens, "after kill " + it + ": owned ranges " + ranges);
        checkState(db, ranges, gens);
        db.waitForCompactions();
        db.versionSet().awaitDeletions();
        assertEquals(Set.of(), orphans(db, primary), "objects outside the live files, kill " + it);
        // The reopened shard takes writes again, and another machine reads them.
        db.put(0, "default", "after-kill".getBytes(UTF_8), 0, new byte[] {(byte) it});
        db.flush();
      }
      try (Db db = Db.open(primary, tmp.resolve("again-" + it), config())) {
        byte[][] row = db.get(0, "default", "after-kill".getBytes(UTF_8));
        assertNotNull(row, "a write after kill " + it + " survives a reopen");
        assertArrayEquals(new byte[] {(byte) it}, row[0]);
      }
      return state;
    }
  }

  /** The generation bucket by bucket of the owned buckets' first key ("-" when missing). */
  private static String generations(Db db) {
    StringBuilder out = new StringBuilder();
    for (BucketRange r : BucketRange.fromPairs(db.ownedBucketRanges())) {
      for (int bucket = r.lo(); bucket <= r.hi(); bucket++) {
        byte[][] row = db.get(bucket, "default", key(bucket));
        out.append(row == null ? "-" : new String(row[0], UTF_8).substring(0, 1));
      }
    }
    return out.toString();
  }

  /** Every key of the owned buckets {@code state} has exactly generation {@code gens[bucket]}. */
  private static void checkState(Db db, String state, String gens) {
    assertEquals(state, OwnedRanges.format(db.ownedBucketRanges()));
    for (int i = 0; i < KEYS; i++) {
      int bucket = i % BUCKETS;
      if (bucket < gens.length()) {
        byte[][] row = db.get(bucket, "default", key(i));
        assertArrayEquals(
            value(i, gens.substring(bucket, bucket + 1)),
            row == null ? null : row[0],
            "key " + i + " in state " + state + " " + gens);
      }
    }
  }

  /** Objects under the primary's data prefix that neither the current nor the fallback lists. */
  private static Set<String> orphans(Db db, Storage primary) throws Exception {
    VersionSet vs = db.versionSet();
    Set<String> live = new HashSet<>();
    Version v = vs.acquire();
    try {
      for (Tree t : v.trees()) {
        for (FileMeta f : t.allFiles()) {
          live.add(vs.remote().path(f.number(), false));
        }
      }
      for (long n : v.vlogs()) {
        live.add(vs.remote().path(n, true));
      }
    } finally {
      v.unref();
    }
    for (long n : vs.previousManifestFiles()) {
      live.add(vs.remote().path(n, false));
      live.add(vs.remote().path(n, true));
    }
    Set<String> out = new HashSet<>(primary.list(RemotePrimary.DATA));
    out.removeAll(live);
    return out;
  }
}
