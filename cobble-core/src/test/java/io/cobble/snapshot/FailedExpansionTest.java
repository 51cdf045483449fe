package io.cobble.snapshot;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.rescale.Rescale;
import io.cobble.storage.ForwardingStorage;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageInput;
import io.cobble.storage.s3.S3Volumes;
import io.cobble.testing.S3ProxyServer;
import io.cobble.version.ExternalFiles;
import io.cobble.version.PendingExpansion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An expansion of a live shard that fails part way (the source's files cannot be read) leaves the
 * shard as it was, in memory and on disk, and can be retried.
 */
class FailedExpansionTest {
  private static final int BUCKETS = 8;
  private static final int KEYS = 400;

  @TempDir Path tmp;

  private static Config config(String ranges) {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("bucket-ranges", ranges)
        .set("memtable.capacity", "16kb")
        .set("snapshot.retention", 0)
        .build();
  }

  private static byte[] key(int i) {
    return String.format("k%05d", i).getBytes(UTF_8);
  }

  private static byte[] value(int i, int gen) {
    return ("g" + gen + "-" + i).getBytes(UTF_8);
  }

  private static void write(Db db, int lo, int hi, int gen) {
    for (int i = 0; i < KEYS; i++) {
      if (i % BUCKETS >= lo && i % BUCKETS <= hi) {
        db.put(i % BUCKETS, "default", key(i), 0, value(i, gen));
      }
    }
  }

  private static void check(Db db, int lo, int hi, int gen) {
    for (int i = 0; i < KEYS; i++) {
      if (i % BUCKETS >= lo && i % BUCKETS <= hi) {
        assertArrayEquals(value(i, gen), db.get(i % BUCKETS, "default", key(i))[0], "key " + i);
      }
    }
  }

  /** Fails reads of the paths in {@link #failing}. */
  private static final class FailingStorage extends ForwardingStorage {
    final Set<String> failing = ConcurrentHashMap.newKeySet();

    FailingStorage(Storage delegate) {
      super(delegate);
    }

    @Override
    public StorageInput open(String path) throws IOException {
      check(path);
      return delegate.open(path);
    }

    @Override
    public StorageInput open(String path, long length) throws IOException {
      check(path);
      return delegate.open(path, length);
    }

    @Override
    public byte[] readAll(String path) throws IOException {
      check(path);
      return delegate.readAll(path);
    }

    private void check(String path) throws IOException {
      if (failing.contains(path)) {
        throw new IOException("injected failure reading " + path);
      }
    }
  }

  @Test
  void aFailedExpansionLeavesTheShardAsItWasAndCanBeRetried() throws Exception {
    try (S3ProxyServer server = S3ProxyServer.start(tmp.resolve("s3"), "vol");
        Storage s3 = S3Volumes.open(server, "vol/snapshots")) {
      FailingStorage volume = new FailingStorage(s3);
      SnapshotStore store = new SnapshotStore(volume);
      long sb;
      try (Db b = Db.open(tmp.resolve("b"), config("4-7"));
          SnapshotManager mb = SnapshotManager.open(b, volume, "b")) {
        write(b, 4, 7, 1);
        sb = mb.snapshot().published().join().id();
      }
      Path dir = tmp.resolve("a");
      Db a = Db.open(dir, config("0-3"), volume);
      SnapshotManager ma = SnapshotManager.open(a, volume, "a");
      write(a, 0, 3, 2);
      for (SnapshotFile f : store.require("b", sb).files()) {
        if (!f.isVlog()) {
          volume.failing.add(f.volumePath());
        }
      }
      RuntimeException e =
          assertThrows(
              RuntimeException.class,
              () ->
                  Rescale.expandBuckets(
                      ma, List.of(ShardRef.of("b", sb)), List.of(BucketRange.of(4, 7))));
      Throwable cause = e;
      while (cause.getCause() != null && !String.valueOf(cause.getMessage()).contains("injected")) {
        cause = cause.getCause();
      }
      assertTrue(String.valueOf(cause.getMessage()).contains("injected"), e.toString());
      assertArrayEquals(new int[] {0, 3}, a.ownedBucketRanges());
      assertFalse(Files.exists(dir.resolve(PendingExpansion.FILE_NAME)));
      assertFalse(ExternalFiles.read(dir).isPresent(), "nothing adopted, nothing listed");
      check(a, 0, 3, 2);
      write(a, 0, 3, 3);
      a.flush();
      assertEquals(1, store.leasePaths("a").size());
      ma.snapshot().published().join();
      assertTrue(store.leasePaths("a").isEmpty(), "the failed expansion's lease ends too");

      volume.failing.clear();
      Rescale.expandBuckets(ma, List.of(ShardRef.of("b", sb)), List.of(BucketRange.of(4, 7)));
      assertArrayEquals(new int[] {0, 7}, a.ownedBucketRanges());
      check(a, 0, 3, 3);
      check(a, 4, 7, 1);
      ma.close();
      a.close();
      try (Db reopened = Db.open(dir, config("0-3"), volume)) {
        assertArrayEquals(new int[] {0, 7}, reopened.ownedBucketRanges());
        check(reopened, 0, 3, 3);
        check(reopened, 4, 7, 1);
      }
    }
  }
}
