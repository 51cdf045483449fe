package io.cobble.flink.table.source;

import io.cobble.reader.Reader;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * One {@link Reader} (and so one block cache and one set of open shard snapshots) per table and
 * snapshot choice in a JVM, shared by every lookup subtask running there, so that parallel lookups
 * in a TaskManager neither copy the table nor warm separate caches. Reference-counted: the last
 * user closes it. Each shared reader pins the global snapshot it reads (and the one before, whose
 * shards may still serve lookups that started before a refresh) so that the writer's retention
 * cannot delete files under it; the pin is renewed at each poll and lapses if the TaskManager dies.
 */
final class SharedReaders {

  private static final Map<List<Object>, Lease> OPEN = new HashMap<>();
  private static final int MAX_PIN_ATTEMPTS = 20;

  private SharedReaders() {}

  /** A lease on the shared reader of {@code settings}; close it when done. */
  static Lease acquire(SourceSettings settings) throws IOException {
    List<Object> key =
        Arrays.asList(settings.table(), settings.globalId(), settings.readerConfig().values());
    synchronized (OPEN) {
      Lease lease = OPEN.get(key);
      if (lease == null) {
        Storage storage = settings.table().open();
        try {
          lease = new Lease(key, storage, settings.openReader(storage), settings);
        } catch (RuntimeException e) {
          storage.close();
          throw e;
        }
        try {
          lease.pinCurrent();
        } catch (RuntimeException e) {
          lease.closeResources();
          throw e;
        }
        OPEN.put(key, lease);
      }
      lease.users++;
      return lease;
    }
  }

  /** A shared reader; {@link #refreshIfDue()} moves it to a new snapshot at most once a poll. */
  static final class Lease implements AutoCloseable {
    private final List<Object> key;
    private final Storage storage;
    private final Reader reader;
    private final boolean follows;
    private final long pollNanos;
    private final SnapshotStore store;
    private final SnapshotLease pin;
    private final String root;
    private volatile long lastRefresh;
    private long previousGlobal = -1;
    private int users;

    private Lease(List<Object> key, Storage storage, Reader reader, SourceSettings settings) {
      this.key = key;
      this.storage = storage;
      this.reader = reader;
      this.follows = settings.followsLatest();
      this.pollNanos = settings.pollIntervalMs() * 1_000_000L;
      this.lastRefresh = System.nanoTime();
      this.store = new SnapshotStore(storage);
      this.pin =
          new SnapshotLease(
              store,
              "lookup-" + UUID.randomUUID(),
              settings.snapshotLeaseMs(),
              System::currentTimeMillis);
      this.root = String.valueOf(settings.table().root());
    }

    Reader reader() {
      return reader;
    }

    /**
     * Once a poll interval: picks up a newer global snapshot when following the latest, and renews
     * the pin.
     */
    /** Whether {@link #refreshIfDue()} would look for a new snapshot now (a storage read). */
    boolean refreshDue() {
      return System.nanoTime() - lastRefresh >= pollNanos;
    }

    void refreshIfDue() {
      if (System.nanoTime() - lastRefresh < pollNanos) {
        return;
      }
      synchronized (this) {
        if (System.nanoTime() - lastRefresh >= pollNanos) {
          long before = reader.snapshot().id();
          if (follows && reader.refresh()) {
            previousGlobal = before;
          }
          pinCurrent();
          lastRefresh = System.nanoTime();
        }
      }
    }

    /**
     * Pins the reader's global snapshot, then checks it still exists: retention may have expired it
     * between the reader reading {@code CURRENT} and the pin landing; a follower then moves on.
     */
    private synchronized void pinCurrent() {
      for (int attempt = 1; ; attempt++) {
        long id = reader.snapshot().id();
        pin.hold(previousGlobal < 0 ? Set.of(id) : Set.of(id, previousGlobal));
        if (store.readGlobal(id).isPresent()) {
          return;
        }
        if (!follows || attempt == MAX_PIN_ATTEMPTS) {
          throw new IllegalStateException(
              "Global snapshot "
                  + id
                  + " of the Cobble table at "
                  + root
                  + " was expired before the lookup could pin it"
                  + (follows
                      ? " ("
                          + attempt
                          + " attempts); the writer commits faster than it can"
                          + " be pinned: raise 'snapshot.retention' on the writer"
                      : "; choose a retained 'scan.checkpoint-id' or 'latest'"));
        }
        reader.refresh();
      }
    }

    @Override
    public void close() throws IOException {
      synchronized (OPEN) {
        if (--users > 0) {
          return;
        }
        OPEN.remove(key);
      }
      closeResources();
    }

    private void closeResources() throws IOException {
      try {
        pin.release();
      } finally {
        try {
          reader.close();
        } finally {
          storage.close();
        }
      }
    }
  }
}
