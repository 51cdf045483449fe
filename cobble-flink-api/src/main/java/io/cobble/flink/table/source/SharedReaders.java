package io.cobble.flink.table.source;

import io.cobble.reader.Reader;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@link Reader} (and so one block cache and one set of open shard snapshots) per table and
 * snapshot choice in a JVM, shared by every lookup subtask running there, so that parallel lookups
 * in a TaskManager neither copy the table nor warm separate caches. Reference-counted: the last
 * user closes it.
 */
final class SharedReaders {

  private static final Map<List<Object>, Lease> OPEN = new HashMap<>();

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
    private volatile long lastRefresh;
    private int users;

    private Lease(List<Object> key, Storage storage, Reader reader, SourceSettings settings) {
      this.key = key;
      this.storage = storage;
      this.reader = reader;
      this.follows = settings.followsLatest();
      this.pollNanos = settings.pollIntervalMs() * 1_000_000L;
      this.lastRefresh = System.nanoTime();
    }

    Reader reader() {
      return reader;
    }

    /** Picks up a newer global snapshot when following the latest and the poll interval passed. */
    void refreshIfDue() {
      if (!follows || System.nanoTime() - lastRefresh < pollNanos) {
        return;
      }
      synchronized (this) {
        if (System.nanoTime() - lastRefresh >= pollNanos) {
          reader.refresh();
          lastRefresh = System.nanoTime();
        }
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
      try {
        reader.close();
      } finally {
        storage.close();
      }
    }
  }
}
