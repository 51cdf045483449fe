package io.cobble.flink.table.source;

import io.cobble.reader.ScanSplit;
import io.cobble.schema.FamilySchema;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotStore;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The table files of a shard snapshot that the previous snapshots over the same buckets do not
 * have. Snapshots share files, and a row changes only through a new entry for its key, which lies
 * in a new file (a flush of new writes, or a compaction's output): so the keys of those files are
 * the only candidates for changed rows, and rows living only in shared files are never read.
 */
final class ChangedFiles {

  private ChangedFiles() {}

  /**
   * A manifest like {@code current}'s snapshot but listing only its new table files of the split's
   * family (and its value logs, which they may point into); empty when the manifests cannot tell
   * (one is gone, or the schemas differ), and every row is a candidate.
   */
  static Optional<ShardSnapshot> of(
      SnapshotStore store, ScanSplit current, List<ScanSplit> previous) {
    Optional<ShardSnapshot> now = store.read(current.shardId(), current.snapshotId());
    if (!now.isPresent()) {
      return Optional.empty();
    }
    Set<String> before = new HashSet<>();
    for (ScanSplit split : previous) {
      Optional<ShardSnapshot> then = store.read(split.shardId(), split.snapshotId());
      if (!then.isPresent() || then.get().schemaId() != now.get().schemaId()) {
        return Optional.empty();
      }
      then.get().files().forEach(file -> before.add(file.volumePath()));
    }
    ShardSnapshot snapshot = now.get();
    FamilySchema family = snapshot.schema().family(current.family());
    List<SnapshotFile> files = new ArrayList<>();
    for (SnapshotFile file : snapshot.files()) {
      if (file.isVlog()
          || (family != null
              && file.family() == family.id()
              && !before.contains(file.volumePath()))) {
        files.add(file);
      }
    }
    return Optional.of(
        new ShardSnapshot(
            snapshot.shardId(),
            snapshot.id(),
            snapshot.createdMillis(),
            snapshot.totalBuckets(),
            snapshot.ranges(),
            snapshot.schema(),
            snapshot.nextFileNumber(),
            files));
  }
}
