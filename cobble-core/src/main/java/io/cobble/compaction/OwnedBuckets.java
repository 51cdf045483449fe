package io.cobble.compaction;

import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import java.util.Arrays;

/**
 * The bucket ranges a shard owns, as compaction sees them: a table file is clean when every key it
 * may hold lies in one owned range, that is, its span (from its smallest key's bucket to its
 * largest's) crosses no bucket the shard gave up. Keys start with their big-endian bucket.
 */
public final class OwnedBuckets {
  private final int[] pairs;

  /**
   * {@code pairs}: inclusive, disjoint [lo, hi] pairs; adjacent ones are joined, so that a file
   * across their boundary counts as clean.
   */
  public OwnedBuckets(int[] pairs) {
    int[][] sorted = new int[pairs.length / 2][];
    for (int i = 0; i < sorted.length; i++) {
      sorted[i] = new int[] {pairs[2 * i], pairs[2 * i + 1]};
    }
    Arrays.sort(sorted, (a, b) -> Integer.compare(a[0], b[0]));
    int[] joined = new int[pairs.length];
    int n = 0;
    for (int[] r : sorted) {
      if (n > 0 && joined[n - 1] + 1 >= r[0]) {
        joined[n - 1] = Math.max(joined[n - 1], r[1]);
      } else {
        joined[n++] = r[0];
        joined[n++] = r[1];
      }
    }
    this.pairs = Arrays.copyOf(joined, n);
  }

  private static final int MAX_BUCKET = 0xFFFF;

  /** Every bucket a key can name: no file is ever foreign. */
  public static final OwnedBuckets ALL = new OwnedBuckets(new int[] {0, MAX_BUCKET});

  public static int bucketOf(byte[] key) {
    return Bytes.getShort(key, 0);
  }

  public boolean owns(int bucket) {
    return rangeOf(bucket) >= 0;
  }

  /** The index of the owned range holding {@code bucket}, or -1 if it is not owned. */
  public int rangeOf(int bucket) {
    for (int i = 0; i < pairs.length; i += 2) {
      if (bucket >= pairs[i] && bucket <= pairs[i + 1]) {
        return i / 2;
      }
    }
    return -1;
  }

  /** Whether all of {@code f}'s span lies in one owned range. */
  public boolean holdsOnlyOwned(FileMeta f) {
    if (pairs.length == 2 && pairs[0] == 0 && pairs[1] == MAX_BUCKET) {
      return true;
    }
    int first = rangeOf(bucketOf(f.smallest()));
    return first >= 0 && first == rangeOf(bucketOf(f.largest()));
  }
}
