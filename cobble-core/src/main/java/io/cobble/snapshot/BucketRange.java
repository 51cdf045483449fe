package io.cobble.snapshot;

import java.util.ArrayList;
import java.util.List;

/** An inclusive range of buckets {@code [lo, hi]}: the unit rescale cuts shards along. */
public final class BucketRange implements Comparable<BucketRange> {
  private final int lo;
  private final int hi;

  public BucketRange(int lo, int hi) {
    if (lo < 0 || hi < lo || hi > 65535) {
      throw new IllegalArgumentException(
          "invalid bucket range " + lo + "-" + hi + ": need 0 <= lo <= hi <= 65535");
    }
    this.lo = lo;
    this.hi = hi;
  }

  public static BucketRange of(int lo, int hi) {
    return new BucketRange(lo, hi);
  }

  public int lo() {
    return lo;
  }

  public int hi() {
    return hi;
  }

  public boolean contains(int bucket) {
    return bucket >= lo && bucket <= hi;
  }

  public boolean contains(BucketRange other) {
    return other.lo >= lo && other.hi <= hi;
  }

  public boolean overlaps(BucketRange other) {
    return other.lo <= hi && other.hi >= lo;
  }

  /** Ranges from a Config's {@code bucketRanges()} pairs. */
  public static List<BucketRange> fromPairs(int[] pairs) {
    List<BucketRange> out = new ArrayList<>();
    for (int i = 0; i < pairs.length; i += 2) {
      out.add(new BucketRange(pairs[i], pairs[i + 1]));
    }
    return out;
  }

  /** The {@code bucket-ranges} config value, e.g. {@code 0-9,20-29}. */
  public static String toConfigValue(List<BucketRange> ranges) {
    StringBuilder b = new StringBuilder();
    for (BucketRange r : ranges) {
      if (b.length() > 0) {
        b.append(',');
      }
      b.append(r);
    }
    return b.toString();
  }

  /** Whether every range of {@code inner} lies inside one range of {@code outer}. */
  public static boolean covers(List<BucketRange> outer, List<BucketRange> inner) {
    for (BucketRange i : inner) {
      boolean inside = false;
      for (BucketRange o : outer) {
        inside |= o.contains(i);
      }
      if (!inside) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int compareTo(BucketRange o) {
    return lo != o.lo ? Integer.compare(lo, o.lo) : Integer.compare(hi, o.hi);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BucketRange && ((BucketRange) o).lo == lo && ((BucketRange) o).hi == hi;
  }

  @Override
  public int hashCode() {
    return lo * 65537 + hi;
  }

  @Override
  public String toString() {
    return lo + "-" + hi;
  }
}
