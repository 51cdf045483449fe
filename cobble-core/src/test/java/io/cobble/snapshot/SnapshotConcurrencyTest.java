package io.cobble.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Db;
import io.cobble.storage.ForwardingStorage;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOutput;
import io.cobble.storage.file.FileStorage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshot managers sharing a volume with other processes: writers of other shards, a global
 * retention pass, and an earlier manager of the same shard that is still publishing.
 */
class SnapshotConcurrencyTest {

  @TempDir Path tmp;
  Storage files;

  @BeforeEach
  void openVolume() throws Exception {
    files = FileStorage.open(tmp.resolve("volume"), true);
  }

  @AfterEach
  void closeVolume() throws Exception {
    files.close();
  }

  /**
   * Shard a's retention collects garbage while shard b's own retention deletes b's older manifest:
   * the manifest is listed, then gone when read. That is not damage, and a's snapshot stays good.
   */
  @Test
  void collectionToleratesManifestsOfOtherShardsDeletedWhileItReads() throws Exception {
    String deletedManifest = SnapshotStore.manifestPath("b", 1);
    AtomicBoolean armed = new AtomicBoolean();
    Storage volume =
        new ForwardingStorage(files) {
          @Override
          public byte[] readAll(String path) throws IOException {
            if (path.equals(deletedManifest) && armed.compareAndSet(true, false)) {
              // Shard b's retention, in another process, wins the race to this manifest.
              new SnapshotStore(delegate).deleteSnapshot("b", 1);
            }
            return delegate.readAll(path);
          }
        };
    try (Db a = Db.open(tmp.resolve("a"), SnapshotTest.config(1));
        Db b = Db.open(tmp.resolve("b"), SnapshotTest.config(0));
        SnapshotManager snapsA = SnapshotManager.open(a, volume, "a");
        SnapshotManager snapsB = SnapshotManager.open(b, volume, "b")) {
      SnapshotTest.write(b, 0, 1000, 1);
      snapsB.snapshot().published().join();
      SnapshotTest.write(b, 0, 1000, 2);
      ShardSnapshot newestOfB = snapsB.snapshot().published().join();

      SnapshotTest.write(a, 0, 1000, 1);
      snapsA.snapshot().published().join();
      SnapshotTest.write(a, 0, 1000, 2);
      armed.set(true);
      // Retention expires a's snapshot 1 and collects its files: marking reads b's manifests.
      ShardSnapshot second = snapsA.snapshot().published().join();

      assertTrue(!armed.get(), "b's manifest was never read during collection");
      assertEquals(List.of(second.id()), snapsA.published());
      assertEquals(List.of(newestOfB.id()), snapsB.published());
      for (SnapshotFile f : newestOfB.files()) {
        assertTrue(volume.exists(f.volumePath()), "b's live file " + f.volumePath() + " is gone");
      }
    }
    try (Db restored =
        SnapshotRestore.resume(tmp.resolve("ra"), volume, "a", SnapshotTest.config(0))) {
      SnapshotTest.check(restored, 0, 1000, 2);
    }
  }

  /**
   * The global retention (the committer, another process) deletes an old snapshot of the shard
   * after the shard's own retention listed it: the shard's retention skips it instead of failing
   * the snapshot it just published.
   */
  @Test
  void retentionSkipsASnapshotTheGlobalRetentionDeletedMeanwhile() throws Exception {
    AtomicBoolean armed = new AtomicBoolean();
    Storage volume =
        new ForwardingStorage(files) {
          @Override
          public List<String> list(String prefix) throws IOException {
            if (prefix.equals("pins/s/") && armed.compareAndSet(true, false)) {
              // Retention has listed the shard's snapshots; the committer's retention wins now.
              new SnapshotStore(delegate).deleteSnapshot("s", 1);
            }
            return delegate.list(prefix);
          }
        };
    try (Db db = Db.open(tmp.resolve("s"), SnapshotTest.config(1));
        SnapshotManager snaps = SnapshotManager.open(db, volume, "s")) {
      SnapshotTest.write(db, 0, 1000, 1);
      snaps.snapshot().published().join();
      SnapshotTest.write(db, 0, 1000, 2);
      armed.set(true);
      ShardSnapshot second = snaps.snapshot().published().join();
      assertTrue(!armed.get(), "retention never listed the pins");
      assertEquals(List.of(second.id()), snaps.published());
    }
    try (Db restored =
        SnapshotRestore.resume(tmp.resolve("r"), volume, "s", SnapshotTest.config(0))) {
      SnapshotTest.check(restored, 0, 1000, 2);
    }
  }

  /**
   * A job attempt fails after publishing snapshot 2; the next attempt resumes from snapshot 1 and
   * writes rows of the same shape again, so its new files get the numbers, sizes and entry counts
   * of the failed attempt's. Its snapshots must upload them, not take the failed attempt's uploads
   * for them (which would show the failed attempt's values to every reader).
   */
  @Test
  void aResumedShardNeverReusesUploadsOfTheAttemptThatFailed() throws Exception {
    try (Db failed = Db.open(tmp.resolve("failed"), SnapshotTest.config(0));
        SnapshotManager snaps = SnapshotManager.open(failed, files, "s")) {
      SnapshotTest.write(failed, 0, 1000, 1);
      snaps.snapshot().published().join();
      SnapshotTest.write(failed, 0, 1000, 2);
      snaps.snapshot().published().join();
    }
    long resumedFrom = 1;
    try (Db resumed =
            SnapshotRestore.resume(
                tmp.resolve("resumed"), files, "s", resumedFrom, SnapshotTest.config(0));
        SnapshotManager snaps = SnapshotManager.open(resumed, files, "s")) {
      SnapshotTest.write(resumed, 0, 1000, 3);
      ShardSnapshot third = snaps.snapshot().published().join();
      assertEquals(3, third.id());
    }
    try (Db restored =
        SnapshotRestore.resume(tmp.resolve("restored"), files, "s", 3, SnapshotTest.config(0))) {
      SnapshotTest.check(restored, 0, 1000, 3);
    }
  }

  /**
   * A cancelled Flink task closes its manager from an interrupted thread while a snapshot is still
   * uploading. The close waits for it anyway: otherwise the next manager of the shard numbers its
   * snapshot with the same id and two processes publish one snapshot id.
   */
  @Test
  void interruptedCloseStillWaitsForThePendingSnapshot() throws Exception {
    CountDownLatch uploading = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Storage volume =
        new ForwardingStorage(files) {
          @Override
          public StorageOutput create(String path) throws IOException {
            if (path.startsWith("data/z/")) {
              uploading.countDown();
              try {
                release.await();
              } catch (InterruptedException e) {
                throw new UncheckedIOException(new IOException(e));
              }
            }
            return delegate.create(path);
          }
        };
    Thread closer = Thread.currentThread();
    Thread releaser =
        new Thread(
            () -> {
              // Lets the upload go on only once the closing thread waits for it.
              while (closer.getState() != Thread.State.TIMED_WAITING
                  && closer.getState() != Thread.State.WAITING) {
                Thread.onSpinWait();
                if (release.getCount() == 0) {
                  return;
                }
              }
              release.countDown();
            });
    PendingSnapshot pending;
    try (Db db = Db.open(tmp.resolve("z"), SnapshotTest.config(0))) {
      SnapshotManager snaps = SnapshotManager.open(db, volume, "z");
      SnapshotTest.write(db, 0, 1000, 1);
      pending = snaps.snapshot();
      uploading.await();
      releaser.start();
      closer.interrupt();
      try {
        snaps.close();
        assertTrue(Thread.interrupted(), "close kept the interrupt status");
        assertTrue(
            pending.published().isDone(), "close returned while the snapshot was still uploading");
      } finally {
        Thread.interrupted();
        release.countDown();
        releaser.join();
      }
      assertEquals(pending.id(), pending.published().join().id());
      try (SnapshotManager next = SnapshotManager.open(db, volume, "z")) {
        assertEquals(pending.id() + 1, next.snapshot().published().join().id());
      }
    }
  }

  /**
   * Two managers of one shard at once, as an attempt of a job that another process still runs
   * behind (fencing failed): the second publication of an id fails instead of replacing the
   * snapshot someone may already have committed.
   */
  @Test
  void aSnapshotIdIsNeverPublishedTwice() throws Exception {
    try (Db first = Db.open(tmp.resolve("first"), SnapshotTest.config(0));
        Db second = Db.open(tmp.resolve("second"), SnapshotTest.config(0));
        SnapshotManager zombie = SnapshotManager.open(first, files, "s");
        SnapshotManager current = SnapshotManager.open(second, files, "s")) {
      SnapshotTest.write(first, 0, 1000, 1);
      SnapshotTest.write(second, 0, 1000, 2);
      ShardSnapshot published = current.snapshot().published().join();
      current.pin(published.id());
      PendingSnapshot late = zombie.snapshot();
      assertEquals(published.id(), late.id());
      CompletionException e = assertThrows(CompletionException.class, late.published()::join);
      assertTrue(e.getCause().getMessage().contains("another snapshot manager"), e.getMessage());
      assertEquals(Set.of(published.id()), current.pinned(), "the failed publication kept the pin");
    }
    try (Db restored =
        SnapshotRestore.resume(tmp.resolve("restored"), files, "s", SnapshotTest.config(0))) {
      SnapshotTest.check(restored, 0, 1000, 2);
    }
  }
}
