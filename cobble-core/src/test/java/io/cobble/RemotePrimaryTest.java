package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.snapshot.CountingStorage;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.snapshot.SnapshotRestore;
import io.cobble.snapshot.StopServerStorage;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.storage.Volume;
import io.cobble.storage.VolumeKind;
import io.cobble.storage.VolumeSet;
import io.cobble.storage.s3.S3Volumes;
import io.cobble.testing.S3ProxyServer;
import io.cobble.version.FileMeta;
import io.cobble.version.RemotePrimary;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import io.cobble.version.VersionSet;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A Db whose primary volume is object storage (S3Proxy with signature authentication on 127.0.0.1):
 * files and manifests live remotely, a local directory stages and caches them, one writer at a time
 * holds the lease, and a second machine with an empty cache reopens the same state.
 */
@Timeout(120)
class RemotePrimaryTest {
  private static final int BUCKETS = 4;
  private static final String SEED_PROPERTY = "cobble.remote-primary.seed";

  @TempDir Path tmp;
  private Path blobs;
  private S3ProxyServer server;
  private CountingStorage primary;

  @BeforeEach
  void start() throws Exception {
    blobs = tmp.resolve("s3");
    server = S3ProxyServer.start(blobs, "vol");
    primary = new CountingStorage(openSteady(server));
  }

  @AfterEach
  void stop() throws Exception {
    primary.close();
    server.close();
  }

  /** The primary volume with short timeouts, so a stopped server fails calls within seconds. */
  private static Storage open(S3ProxyServer server) throws Exception {
    return StorageProviders.open(
        URI.create("s3://vol/db"), StorageOptions.of(server.failFastClientOptions()));
  }

  /**
   * The primary volume with the provider's default timeouts and attempts, for a server that stays
   * up: short timeouts failed healthy uploads twice in a row on a loaded machine ("Error writing
   * request body to server").
   */
  private static Storage openSteady(S3ProxyServer server) throws Exception {
    return StorageProviders.open(
        URI.create("s3://vol/db"), StorageOptions.of(server.clientOptions()));
  }

  private static Config.Builder base() {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("memtable.capacity", "64kb")
        .set("sst.block-size", "1kb")
        .set("sst.target-file-size", "32kb")
        .set("compaction.level-base-size", "64kb")
        .set("compaction.l0-file-limit", 2)
        .set("compaction.threads", 1)
        .set("value-separation.threshold", "100")
        .set("fsync.enabled", false)
        .set("remote-cache.chunk-size", "4kb");
  }

  private static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(UTF_8);
  }

  private static byte[] value(int i, int gen) {
    String base = "v" + gen + "-" + i;
    return (i % 7 == 0 ? base.repeat(20) : base).getBytes(UTF_8);
  }

  private static void write(Db db, int from, int to, int gen) {
    for (int i = from; i < to; i++) {
      db.put(i % BUCKETS, "default", key(i), 0, value(i, gen));
    }
  }

  private static void check(Db db, int from, int to, int gen) {
    for (int i = from; i < to; i++) {
      byte[][] row = db.get(i % BUCKETS, "default", key(i));
      assertArrayEquals(value(i, gen), row == null ? null : row[0], "key " + i);
    }
  }

  private static void checkAbsent(Db db, int from, int to) {
    for (int i = from; i < to; i++) {
      assertNull(db.get(i % BUCKETS, "default", key(i)), "key " + i);
    }
  }

  /** The remote objects every file of the current version and of the fallback manifest may use. */
  private static Set<String> liveObjects(Db db) {
    VersionSet vs = db.versionSet();
    RemotePrimary remote = vs.remote();
    Set<Long> numbers = new HashSet<>(vs.previousManifestFiles());
    Version v = vs.current();
    for (Tree t : v.trees()) {
      for (FileMeta f : t.allFiles()) {
        numbers.add(f.number());
      }
    }
    numbers.addAll(v.vlogs());
    Set<String> out = new HashSet<>();
    for (long n : numbers) {
      out.add(remote.path(n, false));
      out.add(remote.path(n, true));
    }
    return out;
  }

  private static Set<String> currentObjects(Db db) {
    VersionSet vs = db.versionSet();
    Set<String> out = new HashSet<>();
    for (Tree t : vs.current().trees()) {
      for (FileMeta f : t.allFiles()) {
        out.add(vs.remote().path(f.number(), false));
      }
    }
    for (long n : vs.current().vlogs()) {
      out.add(vs.remote().path(n, true));
    }
    return out;
  }

  private static List<Path> filesUnder(Path dir) throws Exception {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile).collect(Collectors.toList());
    }
  }

  @Test
  void remotePrimaryNeedsALocalCacheVolume() throws Exception {
    Volume remote =
        Volume.of(
            "s3://vol/db",
            EnumSet.of(VolumeKind.PRIMARY_HIGH),
            StorageOptions.of(server.clientOptions()));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> VolumeSet.of(List.of(remote)));
    assertTrue(e.getMessage().contains("s3://vol/db"), e.getMessage());
    assertTrue(e.getMessage().contains("CACHE"), e.getMessage());
    assertFalse(e.getMessage().contains(server.secretKey()), "no credentials in messages");

    VolumeSet volumes =
        VolumeSet.of(List.of(remote, Volume.of(tmp.resolve("cache").toString(), VolumeKind.CACHE)));
    try (Db db = Db.open(volumes, base().build())) {
      write(db, 0, 500, 1);
    }
    assertFalse(primary.list("data/").isEmpty(), "files went to the primary volume");
    // Another machine: a new, empty cache volume.
    VolumeSet elsewhere =
        VolumeSet.of(
            List.of(remote, Volume.of(tmp.resolve("cache2").toString(), VolumeKind.CACHE)));
    try (Db db = Db.open(elsewhere, base().build())) {
      check(db, 0, 500, 1);
    }
  }

  /**
   * A new random seed per run unless {@code -Dcobble.remote-primary.seed=<seed>} replays one; a
   * failure names the seed and how to replay it.
   */
  @Test
  void randomOperationsReopenExactlyOnAnotherMachine() throws Exception {
    String replay = System.getProperty(SEED_PROPERTY);
    long seed = replay == null ? new Random().nextLong() : Long.parseLong(replay.trim());
    System.out.println("RemotePrimaryTest seed " + seed);
    try {
      randomOperationsReopenExactly(seed);
    } catch (AssertionError | RuntimeException e) {
      throw new AssertionError(
          "failed with seed " + seed + "; replay with -D" + SEED_PROPERTY + "=" + seed, e);
    }
  }

  private void randomOperationsReopenExactly(long seed) throws Exception {
    Random random = new Random(seed);
    TreeMap<Integer, byte[]> model = new TreeMap<>();
    Config config = base().build();
    Db db = Db.open(primary, tmp.resolve("machine1"), config);
    try {
      for (int op = 0; op < 2000; op++) {
        int k = random.nextInt(600);
        int dice = random.nextInt(1000);
        if (dice < 700) {
          byte[] v =
              new byte[random.nextInt(8) == 0 ? 150 + random.nextInt(200) : 1 + random.nextInt(40)];
          random.nextBytes(v);
          db.put(k % BUCKETS, "default", key(k), 0, v);
          model.put(k, v);
        } else if (dice < 950) {
          db.delete(k % BUCKETS, "default", key(k), 0);
          model.remove(k);
        } else if (dice < 980) {
          db.flush();
        } else if (dice < 993) {
          db.compactAll();
        } else {
          // Reopen on the same machine: its cache is reused.
          db.close();
          db = Db.open(primary, tmp.resolve("machine1"), config);
        }
      }
    } finally {
      db.close();
    }
    try (Db other = Db.open(primary, tmp.resolve("machine2"), config)) {
      for (int k = 0; k < 600; k++) {
        byte[][] row = other.get(k % BUCKETS, "default", key(k));
        assertArrayEquals(model.get(k), row == null ? null : row[0], "key " + k);
      }
      other.waitForCompactions();
      Set<String> listed = new HashSet<>(primary.list("data/"));
      assertTrue(liveObjects(other).containsAll(listed), "only live files remain: " + listed);
      assertTrue(listed.containsAll(currentObjects(other)), "every current file is on S3");
    }
  }

  @Test
  void reopenWithAnEmptyCacheReadsOnlyMetadata() throws Exception {
    Config config =
        base()
            .set("sst.target-file-size", "512kb")
            .set("sst.block-size", "4kb")
            .set("memtable.capacity", "1mb")
            .set("value-separation.threshold", "1kb")
            .build();
    int keys = 30_000;
    byte[] filler = new byte[90];
    try (Db db = Db.open(primary, tmp.resolve("machine1"), config)) {
      for (int i = 0; i < keys; i++) {
        db.put(i % BUCKETS, "default", key(i), 0, withSuffix(value(i, 1), filler));
      }
      db.compactAll();
    }
    long data = 0;
    for (String p : primary.list("data/")) {
      data += primary.length(p);
    }
    long before = primary.bytesRead.get();
    try (Db db = Db.open(primary, tmp.resolve("machine2"), config)) {
      long atOpen = primary.bytesRead.get() - before;
      System.out.printf(
          "remote primary reopen with an empty cache: %d data bytes, %d bytes read at open"
              + " (%.2f%%)%n",
          data, atOpen, 100.0 * atOpen / data);
      assertTrue(atOpen < data / 10, "read " + atOpen + " of " + data + " bytes at open");
      for (int i = 0; i < keys; i += 7) {
        assertArrayEquals(
            withSuffix(value(i, 1), filler), db.get(i % BUCKETS, "default", key(i))[0], "key " + i);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"data/.*", "manifests/.*", "CURRENT"})
  void serverStoppedDuringFlushFailsItAndThePreviousStateReopens(String stopAt) throws Exception {
    Path machine = tmp.resolve("machine1");
    StopServerStorage stopping = new StopServerStorage(open(server), this::stopServer);
    // A memtable that holds everything: no flush but the explicit ones.
    Db db = Db.open(stopping, machine, base().set("memtable.capacity", "4mb").build());
    try {
      write(db, 0, 2000, 1);
      db.flush();
      write(db, 0, 1000, 2);
      write(db, 2000, 2500, 2);
      stopping.arm(stopAt);
      long start = System.nanoTime();
      CobbleException e = assertThrows(CobbleException.class, db::flush);
      long ms = (System.nanoTime() - start) / 1_000_000;
      System.out.printf("server stopped before %s: flush failed after %d ms: %s%n", stopAt, ms, e);
      StringBuilder chain = new StringBuilder();
      for (Throwable t = e; t != null; t = t.getCause()) {
        chain.append(t).append('\n');
      }
      assertTrue(chain.toString().contains("127.0.0.1"), "names the endpoint: " + chain);
      assertTrue(e.getMessage().contains("the next flush retries"), e.getMessage());
      // Nothing was lost: the data is still readable, from memory.
      check(db, 0, 1000, 2);
      check(db, 2000, 2500, 2);
      // The final flush of close retries, and fails as well.
      assertThrows(CobbleException.class, db::close);
    } finally {
      db.close();
      stopping.close();
    }
    server = server.restart();
    primary.close();
    primary = new CountingStorage(openSteady(server));
    // The same machine (its cache holds the failed flush's files) and a new one.
    for (Path dir : List.of(machine, tmp.resolve("machine2"))) {
      try (Db reopened = Db.open(primary, dir, base().build())) {
        check(reopened, 0, 2000, 1);
        checkAbsent(reopened, 2000, 2500);
        reopened.waitForCompactions();
        Set<String> listed = new HashSet<>(primary.list("data/"));
        Set<String> stray = new HashSet<>(listed);
        stray.removeAll(liveObjects(reopened));
        assertEquals(Set.of(), stray, "the failed upload is swept, " + dir);
        write(reopened, 3000, 3100, 4);
        reopened.flush();
        check(reopened, 3000, 3100, 4);
      }
    }
  }

  @Test
  void aFailedFlushIsRetriedOnceTheVolumeIsBack() throws Exception {
    StopServerStorage stopping = new StopServerStorage(open(server), this::stopServer);
    try (Db db =
        Db.open(
            stopping, tmp.resolve("machine1"), base().set("memtable.capacity", "4mb").build())) {
      write(db, 0, 2000, 1);
      db.flush();
      write(db, 0, 1000, 2);
      stopping.arm("data/.*");
      assertThrows(CobbleException.class, db::flush);
      write(db, 2000, 2100, 2);
      // The server comes back where it was; the client reconnects.
      server = server.restart();
      db.flush();
      write(db, 2100, 2200, 3);
    } finally {
      stopping.close();
    }
    try (Db db = Db.open(primary, tmp.resolve("machine2"), base().build())) {
      check(db, 0, 1000, 2);
      check(db, 1000, 2000, 1);
      check(db, 2000, 2100, 2);
      check(db, 2100, 2200, 3);
      db.waitForCompactions();
      Set<String> stray = new HashSet<>(primary.list("data/"));
      stray.removeAll(liveObjects(db));
      assertEquals(Set.of(), stray, "the failed attempt's uploads are swept");
    }
  }

  private void stopServer() {
    try {
      server.close();
    } catch (Exception e) {
      throw new IllegalStateException("cannot stop S3Proxy", e);
    }
  }

  @Test
  void aSecondWriterFencesTheFirst() throws Exception {
    try (Storage firstVolume = open(server);
        Db first = Db.open(firstVolume, tmp.resolve("machine1"), base().build())) {
      write(first, 0, 1000, 1);
      first.flush();
      try (Db second = Db.open(primary, tmp.resolve("machine2"), base().build())) {
        check(second, 0, 1000, 1);
        write(first, 1000, 1500, 1);
        CobbleException fenced = assertThrows(CobbleException.class, first::flush);
        assertTrue(
            fenced.getMessage().contains("another writer opened s3://vol/db"), fenced.getMessage());
        write(second, 2000, 3000, 2);
        second.flush();
        check(second, 2000, 3000, 2);
      }
    }
    try (Db third = Db.open(primary, tmp.resolve("machine3"), base().build())) {
      check(third, 0, 1000, 1);
      checkAbsent(third, 1000, 1500);
      check(third, 2000, 3000, 2);
    }
  }

  @Test
  void compactedAwayFilesAndOrphansAreDeletedRemotely() throws Exception {
    Config config = base().set("compaction.l0-file-limit", 100).build();
    Set<String> compactedAway;
    try (Db db = Db.open(primary, tmp.resolve("machine1"), config)) {
      for (int round = 0; round < 4; round++) {
        write(db, 0, 1000, round);
        db.flush();
      }
      compactedAway = currentObjects(db);
      assertTrue(new HashSet<>(primary.list("data/")).containsAll(compactedAway));
      db.compactAll();
      compactedAway.removeAll(currentObjects(db));
      assertFalse(compactedAway.isEmpty());
      // Dead files outlive one more manifest (the fallback); two more publications release them.
      for (int round = 4; round < 6; round++) {
        write(db, 0, 10, round);
        db.flush();
      }
      db.versionSet().awaitDeletions();
      Set<String> listed = new HashSet<>(primary.list("data/"));
      for (String gone : compactedAway) {
        assertFalse(listed.contains(gone), gone + " was compacted away but is still on S3");
      }
      assertTrue(liveObjects(db).containsAll(listed), "only live files: " + listed);
      assertEquals(2, primary.list("manifests/").size(), "the newest manifest and its fallback");
    }
    // A crash between upload and publication leaves objects no manifest names.
    primary.publishAtomically("data/e1-999999.sst", new byte[100]);
    primary.publishAtomically("manifests/MANIFEST-999999-e1", new byte[10]);
    try (Db db = Db.open(primary, tmp.resolve("machine2"), config)) {
      check(db, 10, 1000, 3);
      check(db, 0, 10, 5);
      assertFalse(primary.exists("data/e1-999999.sst"), "orphan swept at open");
      assertFalse(primary.exists("manifests/MANIFEST-999999-e1"), "orphan manifest swept at open");
    }
  }

  @Test
  void cacheServesRepeatedReadsAndRefetchesDamagedCopies() throws Exception {
    Config config = base().set("block-cache.size", 0).build();
    int keys = 5000;
    Path machine1 = tmp.resolve("machine1");
    try (Db db = Db.open(primary, machine1, config)) {
      write(db, 0, keys, 1);
      db.compactAll();
      // Write-through: the writer reads its own files from its cache, not from S3.
      long reads = primary.reads.get();
      check(db, 0, keys, 1);
      assertEquals(reads, primary.reads.get(), "own files are read locally");
    }
    // Damage every file the writer kept: reads still return the right data, from S3.
    for (Path f : filesUnder(machine1.resolve(Db.REMOTE_CACHE_DIR).resolve("files"))) {
      FileDamage.flipMiddle(f);
    }
    try (Db db = Db.open(primary, machine1, config)) {
      long reads = primary.reads.get();
      check(db, 0, keys, 1);
      assertTrue(primary.reads.get() > reads, "damaged copies were fetched again");
    }

    Path machine2 = tmp.resolve("machine2");
    try (Db db = Db.open(primary, machine2, config)) {
      long reads = primary.reads.get();
      check(db, 0, keys, 1);
      long cold = primary.reads.get() - reads;
      assertTrue(cold > 0, "cold blocks come from S3");
      reads = primary.reads.get();
      check(db, 0, keys, 1);
      assertEquals(reads, primary.reads.get(), "a second read of the same blocks makes no GET");
      assertTrue(db.remoteCache().hits() > 0);
      System.out.printf(
          "remote cache: %d GETs for the cold pass, 0 for the warm one, %d bytes cached%n",
          cold, db.remoteCache().usedBytes());
    }
    // Damage every cached chunk: reads detect it by checksum and fetch the blocks again.
    List<Path> chunks = filesUnder(machine2.resolve(Db.REMOTE_CACHE_DIR).resolve("chunks"));
    assertFalse(chunks.isEmpty());
    for (Path f : chunks) {
      FileDamage.flipMiddle(f);
    }
    try (Db db = Db.open(primary, machine2, config)) {
      long reads = primary.reads.get();
      check(db, 0, keys, 1);
      assertTrue(primary.reads.get() > reads, "damaged chunks were fetched again");
    }
    // Losing the whole cache loses nothing.
    try (Stream<Path> s = Files.walk(machine2)) {
      s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
    try (Db db = Db.open(primary, machine2, config)) {
      check(db, 0, keys, 1);
    }
  }

  @Test
  void aDamagedRemoteObjectIsACorruptionNotData() throws Exception {
    Config config = base().set("block-cache.size", 0).build();
    String table;
    try (Db db = Db.open(primary, tmp.resolve("machine1"), config)) {
      write(db, 0, 3000, 1);
      db.compactAll();
      table = currentObjects(db).stream().filter(p -> p.endsWith(".sst")).findFirst().orElseThrow();
    }
    FileDamage.flip(blob(table), 20);
    try (Db db = Db.open(primary, tmp.resolve("machine2"), config)) {
      CorruptionException e =
          assertThrows(
              CorruptionException.class,
              () -> {
                for (int i = 0; i < 3000; i++) {
                  db.get(i % BUCKETS, "default", key(i));
                }
              });
      assertEquals("s3://vol/db/" + table, e.file());
    }
  }

  @Test
  void cacheStaysWithinItsBudget() throws Exception {
    Config config = base().set("block-cache.size", 0).set("remote-cache.size", "64kb").build();
    try (Db db = Db.open(primary, tmp.resolve("machine1"), config)) {
      write(db, 0, 5000, 1);
      db.compactAll();
      check(db, 0, 5000, 1);
      assertTrue(db.remoteCache().usedBytes() <= 64 * 1024, "" + db.remoteCache().usedBytes());
    }
    try (Db db = Db.open(primary, tmp.resolve("machine2"), config)) {
      check(db, 0, 5000, 1);
      assertTrue(db.remoteCache().usedBytes() <= 64 * 1024, "" + db.remoteCache().usedBytes());
      assertNotNull(db.remoteCache());
    }
  }

  @Test
  void aDamagedManifestOrPointerFallsBackToTheOlderState() throws Exception {
    Config config = base().set("compaction.l0-file-limit", 100).build();
    try (Db db = Db.open(primary, tmp.resolve("machine1"), config)) {
      write(db, 0, 1000, 1);
      db.flush();
      write(db, 0, 500, 2);
      db.flush();
      // The newest manifest then names only compaction outputs; the fallback names the L0 files.
      db.compactAll();
    }
    List<String> manifests = primary.list("manifests/");
    assertEquals(2, manifests.size());
    FileDamage.flipMiddle(blob(manifests.get(1)));
    try (Db db = Db.open(primary, tmp.resolve("machine2"), config)) {
      // The fallback's files outlived the compaction that replaced them.
      check(db, 0, 500, 2);
      check(db, 500, 1000, 1);
    }
    FileDamage.flipMiddle(blob(RemotePrimary.CURRENT));
    try (Db db = Db.open(primary, tmp.resolve("machine3"), config)) {
      check(db, 0, 500, 2);
      check(db, 500, 1000, 1);
      write(db, 1000, 1100, 3);
    }
    try (Db db = Db.open(primary, tmp.resolve("machine4"), config)) {
      check(db, 0, 500, 2);
      check(db, 1000, 1100, 3);
    }
  }

  @Test
  void snapshotsOfARemotePrimaryRestoreElsewhere() throws Exception {
    try (Storage snapshots = S3Volumes.open(server, "vol/snapshots")) {
      try (Db db = Db.open(primary, tmp.resolve("machine1"), base().build());
          SnapshotManager snaps = SnapshotManager.open(db, snapshots, "shard")) {
        write(db, 0, 3000, 1);
        db.compactAll();
        snaps.snapshot().published().join();
      }
      // A new cache directory: the snapshot copies files the cache does not hold from S3.
      try (Db db = Db.open(primary, tmp.resolve("machine2"), base().build());
          SnapshotManager snaps = SnapshotManager.open(db, snapshots, "shard")) {
        write(db, 0, 100, 2);
        snaps.snapshot().published().join();
      }
      try (Db restored =
          SnapshotRestore.resume(tmp.resolve("restored"), snapshots, "shard", base().build())) {
        check(restored, 0, 100, 2);
        check(restored, 100, 3000, 1);
      }
    }
  }

  /** The file S3Proxy's file-system store keeps an object of the primary volume in. */
  private Path blob(String path) {
    return blobs.resolve("vol").resolve("db").resolve(path);
  }

  private static byte[] withSuffix(byte[] a, byte[] b) {
    byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
