package io.cobble.version;

import io.cobble.storage.DataFile;

/**
 * Who deletes an obsolete working file. By default the Db deletes every file of its own once no
 * version needs it; an embedder that handed some of those files to someone else (a Flink checkpoint
 * that now owns them) answers {@code false} for those, and the Db forgets them instead of deleting
 * them.
 */
@FunctionalInterface
public interface FileOwnership {

  /** The Db deletes all of its obsolete files. */
  FileOwnership DB_OWNS_ALL = (number, vlog) -> true;

  /**
   * Whether the Db may delete its obsolete file {@code number} (a value log when {@code vlog}).
   * Called on the Db's deleter thread; must not block.
   */
  boolean mayDelete(long number, boolean vlog);

  /**
   * The Db no longer needs {@code file}, which it read in place from outside its directory ({@link
   * VersionSet#adoptExternal}) and never deletes itself: neither a live version nor the fallback
   * manifest refers to it. Whoever put it there may remove it now. Called on the Db's deleter
   * thread; must not block.
   */
  default void externalReleased(long number, boolean vlog, DataFile file) {}
}
