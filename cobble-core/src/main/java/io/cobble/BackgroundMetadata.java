package io.cobble;

import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Loads the pinned metadata of the tables a Db opened from its manifest, after the open ({@link
 * Config.Builder#backgroundMetadata}). One daemon thread serves every Db of the process and ends
 * when idle, so an open starts no thread of its own; a read that needs a table's metadata before
 * this thread reaches it loads it itself (each table loads it once).
 */
final class BackgroundMetadata {

  private static final ThreadPoolExecutor LOADER = loader();

  private BackgroundMetadata() {}

  private static ThreadPoolExecutor loader() {
    ThreadPoolExecutor e =
        new ThreadPoolExecutor(
            1,
            1,
            10,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            ShardState.daemon("cobble-metadata"));
    e.allowCoreThreadTimeOut(true);
    return e;
  }

  /** Loads the metadata of every table of the shard's current version, unless it closes first. */
  static void load(ShardState state) {
    LOADER.execute(() -> loadNow(state));
  }

  private static void loadNow(ShardState state) {
    if (state.closed()) {
      return;
    }
    Version v = state.versions.acquire();
    try {
      for (Tree t : v.trees()) {
        for (FileMeta f : t.allFiles()) {
          if (state.closed()) {
            return;
          }
          try {
            f.table().loadMetadata();
          } catch (RuntimeException e) {
            // A damaged table fails its first read with the same error; a table closed meanwhile
            // is no longer read.
          }
        }
      }
    } finally {
      v.unref();
    }
  }
}
