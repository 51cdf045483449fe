package io.cobble.sst;

import io.cobble.storage.DataFile;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The open tables of the read-only Dbs one reader opens over successive snapshots, by file: a
 * snapshot that still lists a file gets the table already open for it, with its metadata, its kept
 * blocks and its cached blocks, instead of opening the file again and reading every block a second
 * time. A refresh to a snapshot that added a few files then reads only those. Tables never change
 * once written, so a file's path and size name its contents. Each Db closes the tables it got; the
 * file closes when the last of them does.
 */
public final class SharedTables {
  private final Map<String, Table> open = new HashMap<>();

  /**
   * The open table of {@code file} ({@code size} bytes, from the manifest) with a hold for the
   * caller, or the one {@code opener} opens. A file is opened outside the lock, so Dbs opening
   * different shards do not wait for each other's reads; when two open the same file at once, one
   * table stays and the other is closed.
   */
  public Table open(DataFile file, long size, Supplier<Table> opener) {
    String key = file + "#" + size;
    Table held = retained(key);
    if (held != null) {
      return held;
    }
    Table fresh = opener.get();
    synchronized (this) {
      held = retained(key);
      if (held == null) {
        fresh.afterLastClose(() -> forget(key, fresh));
        open.put(key, fresh);
        return fresh;
      }
    }
    fresh.close();
    return held;
  }

  /** Tables open now. */
  public synchronized int size() {
    return open.size();
  }

  private synchronized Table retained(String key) {
    Table t = open.get(key);
    return t != null && t.retain() ? t : null;
  }

  private synchronized void forget(String key, Table table) {
    open.remove(key, table);
  }
}
