package io.cobble.compaction;

import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongPredicate;

/**
 * Files the background cleanup of given-up buckets leaves alone because the shard does not own them
 * yet: files it reads where they lie in a snapshot or checkpoint (adopted by a restore or rescale).
 * Rewriting one of those before the shard's own snapshot names it would only make that first
 * snapshot upload the rewrite instead of referring to the file it already has; once a snapshot (or
 * the checkpoint Flink confirmed) that names the file is durable, the file is the shard's and the
 * hold ends ({@link #release}). Files the shard wrote itself are never held. Manual cleanup ({@code
 * Db.cleanupForeignBuckets}) ignores the hold.
 */
public final class CleanupHold {
  private final LongPredicate notOwned;
  private final Set<Long> released = ConcurrentHashMap.newKeySet();

  /** {@code notOwned}: whether a file number names a file the shard reads in place. */
  public CleanupHold(LongPredicate notOwned) {
    this.notOwned = notOwned;
  }

  /** Whether background cleanup must leave file {@code number} as it is. */
  public boolean holds(long number) {
    return notOwned.test(number) && !released.contains(number);
  }

  /** The shard owns these files now: a durable snapshot of its own names them. */
  public void release(Collection<Long> numbers) {
    for (Long n : numbers) {
      if (notOwned.test(n)) {
        released.add(n);
      }
    }
  }
}
