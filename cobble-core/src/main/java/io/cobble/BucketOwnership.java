package io.cobble;

import io.cobble.version.OwnedRanges;
import io.cobble.version.RemotePrimary;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The bucket ranges a shard owns (inclusive [lo, hi] pairs): the configured ones, or as shrunk or
 * expanded since (persisted in {@link OwnedRanges}, in the Db's directory or on its remote
 * primary). Reads and writes of other buckets are rejected; compaction drops their rows.
 */
final class BucketOwnership {
  private final Path dir;
  // Null when the Db's state lives in dir.
  private final RemotePrimary remote;
  private final int totalBuckets;
  private volatile int[] ranges;

  BucketOwnership(Path dir, RemotePrimary remote, int totalBuckets, int[] ranges) {
    this.dir = dir;
    this.remote = remote;
    this.totalBuckets = totalBuckets;
    this.ranges = ranges;
  }

  /** The owned pairs; callers must not modify the array. */
  int[] ranges() {
    return ranges;
  }

  boolean owns(int bucket) {
    int[] r = ranges;
    for (int i = 0; i < r.length; i += 2) {
      if (bucket >= r[i] && bucket <= r[i + 1]) {
        return true;
      }
    }
    return false;
  }

  /** Whether any bucket of [{@code first}, {@code last}] is owned. */
  boolean ownsAnyOf(int first, int last) {
    int[] r = ranges;
    for (int i = 0; i < r.length; i += 2) {
      if (r[i] <= last && r[i + 1] >= first) {
        return true;
      }
    }
    return false;
  }

  void checkBucket(int bucket) {
    if (bucket < 0 || bucket >= totalBuckets) {
      throw new IllegalArgumentException(
          "bucket " + bucket + " out of range: valid buckets are 0.." + (totalBuckets - 1));
    }
    if (!owns(bucket)) {
      throw new IllegalArgumentException(
          "bucket "
              + bucket
              + " is not owned by this shard: owned ranges are "
              + OwnedRanges.format(ranges));
    }
  }

  /** Narrows the owned ranges to {@code pairs}, each inside an owned range. Under the mutex. */
  void shrink(int[] pairs) {
    if (pairs.length == 0 || pairs.length % 2 != 0) {
      throw new IllegalArgumentException(
          "shrinkBuckets needs a non-empty list of [lo, hi] pairs, got " + pairs.length + " ints");
    }
    int[] owned = ranges;
    for (int i = 0; i < pairs.length; i += 2) {
      boolean inside = false;
      for (int j = 0; j < owned.length; j += 2) {
        inside |= pairs[i] >= owned[j] && pairs[i + 1] <= owned[j + 1];
      }
      if (pairs[i] > pairs[i + 1] || !inside) {
        throw new IllegalArgumentException(
            "cannot shrink to buckets "
                + pairs[i]
                + "-"
                + pairs[i + 1]
                + ": each range must lie inside an owned range ("
                + OwnedRanges.format(owned)
                + ")");
      }
    }
    replace(pairs.clone());
  }

  /** Persists {@code pairs} as the owned ranges, then serves them. Under the mutex. */
  void replace(int[] pairs) {
    if (remote != null) {
      remote.publishRanges(pairs);
    } else {
      OwnedRanges.write(dir, pairs);
    }
    ranges = pairs;
  }

  /** The owned ranges grown by {@code pairs}, sorted and coalesced; rejects invalid ones. */
  int[] grownBy(int[] pairs) {
    if (pairs.length == 0 || pairs.length % 2 != 0) {
      throw new IllegalArgumentException(
          "expandBuckets needs a non-empty list of [lo, hi] pairs, got " + pairs.length + " ints");
    }
    int[] owned = ranges;
    List<int[]> all = new ArrayList<>();
    for (int i = 0; i < owned.length; i += 2) {
      all.add(new int[] {owned[i], owned[i + 1]});
    }
    for (int i = 0; i < pairs.length; i += 2) {
      int lo = pairs[i];
      int hi = pairs[i + 1];
      if (lo < 0 || hi < lo || hi >= totalBuckets) {
        throw new IllegalArgumentException(
            "cannot expand by buckets "
                + lo
                + "-"
                + hi
                + ": valid buckets are 0.."
                + (totalBuckets - 1));
      }
      for (int[] r : all) {
        if (lo <= r[1] && hi >= r[0]) {
          throw new IllegalArgumentException(
              "cannot expand by buckets "
                  + lo
                  + "-"
                  + hi
                  + ": they overlap buckets "
                  + r[0]
                  + "-"
                  + r[1]
                  + " this shard already owns or takes over (owned: "
                  + OwnedRanges.format(owned)
                  + "); expand only by buckets it does not own");
        }
      }
      all.add(new int[] {lo, hi});
    }
    all.sort((a, b) -> Integer.compare(a[0], b[0]));
    List<int[]> merged = new ArrayList<>();
    for (int[] r : all) {
      int[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
      if (last != null && last[1] + 1 == r[0]) {
        last[1] = r[1];
      } else {
        merged.add(r.clone());
      }
    }
    int[] out = new int[merged.size() * 2];
    for (int i = 0; i < merged.size(); i++) {
      out[2 * i] = merged.get(i)[0];
      out[2 * i + 1] = merged.get(i)[1];
    }
    return out;
  }
}
