package io.cobble.flink.table.source;

import io.cobble.snapshot.GlobalPin;
import io.cobble.snapshot.SnapshotStore;
import java.util.Collections;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * The source's pin on the global snapshots its splits still read ({@code global-pins/<owner>} on
 * the table root): the sink's retention keeps them, with their shard snapshots and files, until the
 * pin lets go of them or expires. Rewritten when the held ids change and renewed when half of the
 * lease has passed; a source that stops renewing (a cancelled or dead job) releases them when the
 * lease runs out.
 */
final class SnapshotLease {

  private final SnapshotStore store;
  private final String owner;
  private final long leaseMs;
  private final LongSupplier clock;
  private Set<Long> written = Collections.emptySet();
  private long writtenAt;
  // The first call writes (or removes) the pin whatever it held, e.g. before a restore.
  private boolean synced;

  SnapshotLease(SnapshotStore store, String owner, long leaseMs, LongSupplier clock) {
    this.store = store;
    this.owner = owner;
    this.leaseMs = leaseMs;
    this.clock = clock;
  }

  /** Makes the pin hold exactly {@code globalIds} (none: no pin), renewing it when due. */
  synchronized void hold(Set<Long> globalIds) {
    long now = clock.getAsLong();
    if (synced
        && globalIds.equals(written)
        && (globalIds.isEmpty() || now - writtenAt < leaseMs / 2)) {
      return;
    }
    if (globalIds.isEmpty()) {
      store.releaseGlobalPin(owner);
    } else {
      store.pinGlobals(new GlobalPin(owner, globalIds, now + leaseMs));
    }
    written = Collections.unmodifiableSet(new TreeSet<>(globalIds));
    writtenAt = now;
    synced = true;
  }

  /** Removes the pin. */
  synchronized void release() {
    store.releaseGlobalPin(owner);
    written = Collections.emptySet();
  }
}
