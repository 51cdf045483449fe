package io.cobble.flink.table.source;

import io.cobble.reader.ScanSplit;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotStore;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Cuts a global snapshot into source splits: one per shard snapshot and bucket range. Against a
 * previous global snapshot it plans change splits instead, and leaves out the ranges whose data
 * cannot have changed: the same shard snapshot, or a shard snapshot made of exactly the same files.
 */
final class SplitPlanner {

  private SplitPlanner() {}

  /** Full splits of every row of {@code current}. */
  static List<CobbleSourceSplit> full(long globalId, int totalBuckets, List<ScanSplit> current) {
    List<CobbleSourceSplit> splits = new ArrayList<>();
    for (ScanSplit split : current) {
      splits.add(CobbleSourceSplit.of(globalId, totalBuckets, split, new ArrayList<>()));
    }
    return splits;
  }

  /** Change splits of {@code current} against the previous snapshot's {@code previous} splits. */
  static List<CobbleSourceSplit> changes(
      SnapshotStore store,
      long globalId,
      int totalBuckets,
      List<ScanSplit> current,
      List<ScanSplit> previous) {
    List<CobbleSourceSplit> splits = new ArrayList<>();
    for (ScanSplit split : current) {
      List<ScanSplit> base = overlapping(previous, split);
      if (!unchanged(store, split, base)) {
        splits.add(CobbleSourceSplit.of(globalId, totalBuckets, split, base));
      }
    }
    return splits;
  }

  private static List<ScanSplit> overlapping(List<ScanSplit> previous, ScanSplit split) {
    List<ScanSplit> base = new ArrayList<>();
    for (ScanSplit p : previous) {
      if (p.firstBucket() <= split.lastBucket() && p.lastBucket() >= split.firstBucket()) {
        base.add(p);
      }
    }
    base.sort(Comparator.comparingInt(ScanSplit::firstBucket));
    return base;
  }

  private static boolean unchanged(SnapshotStore store, ScanSplit split, List<ScanSplit> base) {
    if (base.size() != 1) {
      return false;
    }
    ScanSplit before = base.get(0);
    if (before.firstBucket() != split.firstBucket()
        || before.lastBucket() != split.lastBucket()
        || !before.shardId().equals(split.shardId())) {
      return false;
    }
    if (before.snapshotId() == split.snapshotId()) {
      return true;
    }
    Optional<Set<String>> beforeFiles = files(store, before);
    return beforeFiles.isPresent() && beforeFiles.equals(files(store, split));
  }

  private static Optional<Set<String>> files(SnapshotStore store, ScanSplit split) {
    Optional<ShardSnapshot> snapshot = store.read(split.shardId(), split.snapshotId());
    if (!snapshot.isPresent()) {
      return Optional.empty();
    }
    Set<String> paths = new HashSet<>();
    for (SnapshotFile file : snapshot.get().files()) {
      paths.add(file.volumePath());
    }
    return Optional.of(paths);
  }
}
