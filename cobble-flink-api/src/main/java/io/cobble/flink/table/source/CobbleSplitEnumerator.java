package io.cobble.flink.table.source;

import io.cobble.flink.table.layout.TableLayout;
import io.cobble.reader.Reader;
import io.cobble.reader.ScanSplit;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
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
 */
final class CobbleSplitEnumerator implements SplitEnumerator<CobbleSourceSplit, EnumeratorState> {

  private static final Logger LOG = LoggerFactory.getLogger(CobbleSplitEnumerator.class);

  private final SplitEnumeratorContext<CobbleSourceSplit> context;
  private final SourceSettings settings;
  private final List<CobbleSourceSplit> pending;
  private final Set<Integer> finishedReaders = new HashSet<>();
  // The last snapshot cut and its splits, replaced as one so that a poll running while a discovery
  // is applied never pairs an id with another snapshot's splits.
  private volatile Base last;
  private Storage storage;
  private boolean discovered;

  CobbleSplitEnumerator(
      SplitEnumeratorContext<CobbleSourceSplit> context,
      SourceSettings settings,
      EnumeratorState state) {
    this.context = context;
    this.settings = settings;
    this.pending = new ArrayList<>(state.pending());
    this.last = new Base(state.lastGlobalId(), state.lastSplits());
    // A restored batch enumerator has already cut its one snapshot.
    this.discovered = !settings.streaming() && state.lastGlobalId() != 0;
  }

  @Override
  public void start() {
    try {
      storage = settings.table().open();
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot open the Cobble table at " + settings.table().root(), e);
    }
    if (settings.streaming()) {
      context.callAsync(this::poll, this::onDiscovery, 0, settings.pollIntervalMs());
    } else if (!discovered) {
      context.callAsync(this::poll, this::onDiscovery);
    }
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
    } else {
      id = settings.globalId();
    }
    if (id == base.globalId) {
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
      last = discovery.next;
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
    return new EnumeratorState(base.globalId, base.splits, pending);
  }

  @Override
  public void close() throws IOException {
    if (storage != null) {
      storage.close();
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
