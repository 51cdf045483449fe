package io.cobble.flink.table.source;

import io.cobble.flink.table.layout.TableLayout;
import io.cobble.reader.Reader;
import io.cobble.reader.ScanSplit;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cuts global snapshots into splits and hands them to readers. Batch: the configured snapshot once,
 * then no more splits. Streaming: the snapshot {@code CURRENT} names at start in full, then every
 * {@code scan.poll-interval-ms} the change splits of each newer {@code CURRENT} against the one
 * before (intermediate snapshots published between two polls are folded into one diff).
 *
 * <p>A split always goes to the reader that owns its first bucket ({@code bucket * parallelism /
 * buckets}), and readers work through their splits in order: so the changes of one key reach the
 * job in the order the snapshots were published.
 *
 * <p>The global snapshots that splits still read, and (streaming) the last one cut, which the next
 * diff compares with, are pinned on the table root through a {@link SnapshotLease}, so the sink's
 * {@code snapshot.retention} (1 by default) never removes them under a running source. Readers
 * report finished splits ({@link SplitFinishedEvent}) and, when they start, the splits they hold
 * ({@link SplitsHeldEvent}); {@link OutstandingSplits} turns that into the set to pin.
 */
final class CobbleSplitEnumerator implements SplitEnumerator<CobbleSourceSplit, EnumeratorState> {

  private static final Logger LOG = LoggerFactory.getLogger(CobbleSplitEnumerator.class);

  // Pin, then CURRENT again, until both agree; a streaming poll tries again at the next poll.
  private static final int STREAMING_PIN_ATTEMPTS = 3;
  private static final int BATCH_PIN_ATTEMPTS = 20;

  private final SplitEnumeratorContext<CobbleSourceSplit> context;
  private final SourceSettings settings;
  private final List<CobbleSourceSplit> pending;
  private final Set<Integer> finishedReaders = new HashSet<>();
  private final String pinOwner;
  private final OutstandingSplits outstanding;
  // The last snapshot cut and its splits, replaced as one so that a poll running while a discovery
  // is applied never pairs an id with another snapshot's splits.
  private volatile Base last;
  // What the pin must hold, computed on the coordinator thread and written by the worker.
  private volatile Set<Long> pinned = Collections.emptySet();
  // A snapshot being cut by a poll, pinned until its splits are counted in `pinned`.
  private volatile long cutting;

  private Storage storage;
  private SnapshotLease lease;
  private boolean discovered;

  CobbleSplitEnumerator(
      SplitEnumeratorContext<CobbleSourceSplit> context,
      SourceSettings settings,
      EnumeratorState state) {
    this.context = context;
    this.settings = settings;
    this.pending = new ArrayList<>(state.pending());
    this.last = new Base(state.lastGlobalId(), state.lastSplits());
    this.pinOwner = state.pinOwner();
    if (state.lastGlobalId() == 0) {
      this.outstanding = new OutstandingSplits();
    } else {
      List<String> pendingIds = new ArrayList<>();
      state.pending().forEach(split -> pendingIds.add(split.splitId()));
      this.outstanding = OutstandingSplits.restored(state.outstanding(), state.bases(), pendingIds);
    }
    // A restored batch enumerator has already cut its one snapshot.
    this.discovered = !settings.streaming() && state.lastGlobalId() != 0;
    updatePinned();
  }

  @Override
  public void start() {
    try {
      storage = settings.table().open();
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot open the Cobble table at " + settings.table().root(), e);
    }
    lease =
        new SnapshotLease(
            new SnapshotStore(storage),
            pinOwner,
            settings.snapshotLeaseMs(),
            System::currentTimeMillis);
    if (settings.streaming()) {
      context.callAsync(this::poll, this::onDiscovery, 0, settings.pollIntervalMs());
    } else if (!discovered) {
      context.callAsync(this::poll, this::onDiscovery);
    }
    long renewal = Math.max(1, Math.min(settings.pollIntervalMs(), settings.snapshotLeaseMs() / 4));
    context.callAsync(this::holdPin, this::onPinHeld, renewal, renewal);
  }

  /** Writes the pin when what it must hold changed, or renews it; runs in the worker. */
  private Void holdPin() {
    Set<Long> ids = new TreeSet<>(pinned);
    long id = cutting;
    if (id != 0) {
      ids.add(id);
    }
    lease.hold(ids);
    return null;
  }

  private void onPinHeld(Void ignored, Throwable error) {
    if (error != null) {
      // The lease lasts many renewal periods: a storage hiccup is retried at the next one.
      LOG.warn("Cannot renew the snapshot pin on {}; retrying", settings.table().root(), error);
    }
  }

  /**
   * Pins global snapshot {@code id} (CURRENT as just read) and returns the CURRENT read after the
   * pin landed. When both are the same, every retention pass that could still remove {@code id}
   * runs after a newer CURRENT is published, so after the pin is written, and sees it.
   */
  private Optional<Long> pinAndReread(SnapshotStore store, long id) {
    cutting = id;
    holdPin();
    return store.currentGlobalId();
  }

  /** Looks for a global snapshot newer than the last one cut; runs in the coordinator's worker. */
  private Discovery poll() {
    SnapshotStore store = new SnapshotStore(storage);
    Base base = last;
    long id;
    if (settings.followsLatest()) {
      Optional<Long> current = store.currentGlobalId();
      if (!current.isPresent()) {
        if (settings.streaming()) {
          return null;
        }
        store.requireCurrentGlobalId();
      }
      id = current.get();
      int attempts = settings.streaming() ? STREAMING_PIN_ATTEMPTS : BATCH_PIN_ATTEMPTS;
      for (int attempt = 1; id != base.globalId; attempt++) {
        Optional<Long> again = pinAndReread(store, id);
        if (again.isPresent() && again.get() == id) {
          break;
        }
        if (attempt == attempts || !again.isPresent()) {
          if (settings.streaming()) {
            // Commits come faster than a pin lands: the next poll tries again.
            return null;
          }
          // A batch read polls once: giving up here would read an empty table.
          throw new IllegalStateException(
              "Cannot pin a global snapshot of the Cobble table at "
                  + settings.table().root()
                  + ": global/CURRENT "
                  + (again.isPresent()
                      ? "moved on while each of " + attempts + " pins was written"
                      : "became unreadable")
                  + "; retry the read, or name a snapshot with 'scan.snapshot-id'");
        }
        id = again.get();
      }
    } else {
      id = settings.globalId();
      if (id != base.globalId) {
        cutting = id;
        holdPin();
      }
    }
    if (id == base.globalId) {
      holdPin();
      return null;
    }
    try (Reader reader = Reader.open(storage, id, settings.readerConfig())) {
      int buckets = reader.snapshot().totalBuckets();
      List<ScanSplit> splits = reader.splits(TableLayout.FAMILY);
      List<CobbleSourceSplit> cut =
          base.globalId == 0
              ? SplitPlanner.full(id, buckets, splits)
              : SplitPlanner.changes(store, id, buckets, splits, base.splits);
      return new Discovery(base, new Base(id, splits), cut);
    }
  }

  private void onDiscovery(Discovery discovery, Throwable error) {
    if (error != null) {
      if (!settings.streaming()) {
        throw new IllegalStateException(
            "Cannot read the Cobble table at " + settings.table().root(), error);
      }
      // A snapshot expiring between reading CURRENT and its manifest, or a storage hiccup: the
      // next poll tries again.
      LOG.warn("Polling the Cobble table at {} failed; retrying", settings.table().root(), error);
      return;
    }
    if (discovery != null && discovery.base == last) {
      LOG.info(
          "Cobble table {}: global snapshot {} gives {} splits",
          settings.table().root(),
          discovery.next.globalId,
          discovery.splits.size());
      pending.addAll(discovery.splits);
      outstanding.added(discovery.splits, discovery.base.globalId);
      last = discovery.next;
      updatePinned();
      cutting = 0;
    }
    if (!settings.streaming()) {
      discovered = true;
    }
    assignPending();
  }

  private void assignPending() {
    Set<Integer> readers = context.registeredReaders().keySet();
    int parallelism = context.currentParallelism();
    for (Iterator<CobbleSourceSplit> it = pending.iterator(); it.hasNext(); ) {
      CobbleSourceSplit split = it.next();
      int owner = owner(split, parallelism);
      if (readers.contains(owner)) {
        context.assignSplit(split, owner);
        it.remove();
      }
    }
    if (discovered) {
      for (int reader : readers) {
        if (finishedReaders.add(reader)) {
          context.signalNoMoreSplits(reader);
        }
      }
    }
  }

  /** Pins the snapshots outstanding splits read and, when following, the last one cut. */
  private void updatePinned() {
    Set<Long> ids = outstanding.globalIds();
    if (settings.streaming() && last.globalId != 0) {
      ids.add(last.globalId);
    }
    pinned = Collections.unmodifiableSet(ids);
  }

  @Override
  public void handleSourceEvent(int subtaskId, SourceEvent event) {
    if (event instanceof SplitFinishedEvent) {
      outstanding.finished(((SplitFinishedEvent) event).splitId());
    } else if (event instanceof SplitsHeldEvent) {
      outstanding.held(
          subtaskId, ((SplitsHeldEvent) event).splitIds(), context.currentParallelism());
    }
    updatePinned();
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) {
    outstanding.checkpointComplete(checkpointId);
    updatePinned();
  }

  private static int owner(CobbleSourceSplit split, int parallelism) {
    return (int) ((long) split.scan().firstBucket() * parallelism / split.totalBuckets());
  }

  @Override
  public void handleSplitRequest(int subtaskId, String requesterHostname) {
    // Splits are pushed to the reader owning their buckets as soon as it is registered.
  }

  @Override
  public void addSplitsBack(List<CobbleSourceSplit> splits, int subtaskId) {
    // Older than anything pending: they go first, so a key's changes stay in snapshot order.
    pending.addAll(0, splits);
    List<String> ids = new ArrayList<>();
    splits.forEach(split -> ids.add(split.splitId()));
    outstanding.readAgain(ids);
    finishedReaders.remove(subtaskId);
  }

  @Override
  public void addReader(int subtaskId) {
    finishedReaders.remove(subtaskId);
    assignPending();
  }

  @Override
  public EnumeratorState snapshotState(long checkpointId) {
    Base base = last;
    OutstandingSplits state = outstanding.snapshot(checkpointId);
    return new EnumeratorState(
        base.globalId, base.splits, pending, pinOwner, state.globalOf(), state.baseOf());
  }

  /**
   * Closes the table. A batch source is done (a failed batch job starts over with a new pin), so
   * its pin goes now; a streaming source may be closed for a failover that restores it, so its pin
   * stays and lapses after {@code scan.snapshot-lease-ms} unless the restored source renews it.
   */
  @Override
  public void close() throws IOException {
    try {
      if (lease != null && !settings.streaming()) {
        lease.release();
      }
    } finally {
      if (storage != null) {
        storage.close();
      }
    }
  }

  /** A global snapshot (0: none yet) and its scan splits. */
  private static final class Base {
    final long globalId;
    final List<ScanSplit> splits;

    Base(long globalId, List<ScanSplit> splits) {
      this.globalId = globalId;
      this.splits = splits;
    }
  }

  /** The splits of a newly found global snapshot {@code next}, cut against {@code base}. */
  private static final class Discovery {
    final Base base;
    final Base next;
    final List<CobbleSourceSplit> splits;

    Discovery(Base base, Base next, List<CobbleSourceSplit> splits) {
      this.base = base;
      this.next = next;
      this.splits = splits;
    }
  }
}
