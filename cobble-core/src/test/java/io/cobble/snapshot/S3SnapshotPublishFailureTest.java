package io.cobble.snapshot;

import static io.cobble.snapshot.SnapshotTest.check;
import static io.cobble.snapshot.SnapshotTest.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Db;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.S3ProxyServer;
import java.net.URI;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The S3 server stops while a snapshot is being published: the snapshot fails within the storage's
 * call timeout instead of hanging, no half-published snapshot is ever visible (the latest stays the
 * previous one), and after the server comes back the shard restores and snapshots again, with the
 * failed attempt's uploads cleaned up.
 */
@Timeout(180)
class S3SnapshotPublishFailureTest {
  private static final String SHARD = "s";

  @TempDir Path tmp;

  /** Short timeouts and one retry, so the snapshot against a stopped server fails quickly. */
  private static Storage openFailFast(S3ProxyServer server) throws Exception {
    return StorageProviders.open(
        URI.create("s3://vol/snapshots"), StorageOptions.of(server.failFastClientOptions()));
  }

  /** The client's usual timeouts and retries: uploads to a live server must not fail under load. */
  private static Storage open(S3ProxyServer server) throws Exception {
    return StorageProviders.open(
        URI.create("s3://vol/snapshots"), StorageOptions.of(server.clientOptions()));
  }

  /**
   * {@code stopAt} is where the server stops: before the first new data file upload, before the
   * manifest's write-once generation, or before the pointer that makes the manifest visible.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {"data/s/.*", "shards/s/snapshot-\\d{19}\\.gen-.*", "shards/s/snapshot-\\d{19}"})
  void serverStoppedMidPublishFailsTheSnapshotAndLeavesThePreviousOneLatest(String stopAt)
      throws Exception {
    Path blobs = tmp.resolve("s3");
    Path work = tmp.resolve("work");
    S3ProxyServer first = S3ProxyServer.start(blobs, "vol");
    try (Db db = Db.open(work, SnapshotTest.config(0))) {
      try (StopServerStorage volume =
              new StopServerStorage(openFailFast(first), () -> stop(first));
          SnapshotManager snaps = SnapshotManager.open(db, volume, SHARD)) {
        write(db, 0, 3000, 1);
        assertEquals(1, snaps.snapshot().published().get(60, TimeUnit.SECONDS).id());
        write(db, 0, 3000, 2);
        volume.arm(stopAt);
        PendingSnapshot doomed = snaps.snapshot();
        // Bounded by the storage's call timeouts; the get timeout only turns a hang into a failure.
        long start = System.nanoTime();
        ExecutionException failed =
            assertThrows(
                ExecutionException.class, () -> doomed.published().get(60, TimeUnit.SECONDS));
        System.out.printf(
            "server stopped before %s: snapshot failed after %d ms: %s%n",
            stopAt, (System.nanoTime() - start) / 1_000_000, failed.getCause());
        StringBuilder chain = new StringBuilder();
        for (Throwable t = failed.getCause(); t != null; t = t.getCause()) {
          chain.append(t).append('\n');
        }
        assertTrue(chain.toString().contains("127.0.0.1"), "names the endpoint: " + chain);
      } finally {
        stop(first);
      }
      // The bucket is still on disk: the restarted server serves it as it was.
      try (S3ProxyServer again = first.restart();
          Storage volume = open(again)) {
        SnapshotStore store = new SnapshotStore(volume);
        assertEquals(List.of(1L), store.snapshotIds(SHARD), "nothing half-published is listed");
        assertEquals(1, store.requireLatest(SHARD).id());
        try (Db restored = SnapshotRestore.resume(tmp.resolve("r1"), volume, SHARD, config())) {
          check(restored, 0, 3000, 1);
        }
        // The writer carries on against the restarted server; the failed attempt's uploads go.
        try (SnapshotManager snaps = SnapshotManager.open(db, volume, SHARD)) {
          Set<String> referenced = new HashSet<>();
          store.requireLatest(SHARD).files().forEach(f -> referenced.add(f.volumePath()));
          assertEquals(referenced, new HashSet<>(store.dataFiles(SHARD)), "orphans cleaned");
          assertEquals(2, snaps.snapshot().published().get(60, TimeUnit.SECONDS).id());
        }
        try (Db restored = SnapshotRestore.resume(tmp.resolve("r2"), volume, SHARD, config())) {
          check(restored, 0, 3000, 2);
        }
      }
    }
  }

  private static io.cobble.Config config() {
    return SnapshotTest.config(0);
  }

  private static void stop(S3ProxyServer server) {
    try {
      server.close();
    } catch (Exception e) {
      throw new IllegalStateException("cannot stop S3Proxy", e);
    }
  }
}
