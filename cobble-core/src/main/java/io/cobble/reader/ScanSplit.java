package io.cobble.reader;

import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.io.Serializable;
import java.util.Arrays;

/**
 * A serialisable piece of a scan over a global snapshot: one family, one shard snapshot and one of
 * its bucket ranges, optionally resuming after a (bucket, key). Workers of a distributed scan each
 * take splits, and hand back {@link SplitScanner#remaining()} to continue where they stopped.
 */
public final class ScanSplit implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final int FORMAT = 1;

  private final String family;
  private final String shardId;
  private final long snapshotId;
  private final int lo;
  private final int hi;
  private final int resumeBucket;
  private final byte[] resumeAfter;

  ScanSplit(
      String family,
      String shardId,
      long snapshotId,
      int lo,
      int hi,
      int resumeBucket,
      byte[] resumeAfter) {
    this.family = family;
    this.shardId = shardId;
    this.snapshotId = snapshotId;
    this.lo = lo;
    this.hi = hi;
    this.resumeBucket = resumeBucket;
    this.resumeAfter = resumeAfter == null ? null : resumeAfter.clone();
  }

  public String family() {
    return family;
  }

  public String shardId() {
    return shardId;
  }

  public long snapshotId() {
    return snapshotId;
  }

  public int firstBucket() {
    return lo;
  }

  public int lastBucket() {
    return hi;
  }

  /** The bucket the scan continues in ({@link #firstBucket()} for a fresh split). */
  public int resumeBucket() {
    return resumeBucket;
  }

  /** Rows of {@link #resumeBucket()} at or before this key are skipped; null for none. */
  public byte[] resumeAfter() {
    return resumeAfter == null ? null : resumeAfter.clone();
  }

  /** The same split continuing after {@code key} in {@code bucket}. */
  public ScanSplit after(int bucket, byte[] key) {
    if (bucket < lo || bucket > hi) {
      throw new IllegalArgumentException(
          "bucket " + bucket + " is outside this split's buckets " + lo + "-" + hi);
    }
    return new ScanSplit(family, shardId, snapshotId, lo, hi, bucket, key);
  }

  public byte[] toBytes() {
    ByteWriter w = new ByteWriter(64);
    w.writeVarInt(FORMAT);
    w.writeString(family);
    w.writeString(shardId);
    w.writeVarLong(snapshotId);
    w.writeVarInt(lo);
    w.writeVarInt(hi);
    w.writeVarInt(resumeBucket);
    w.writeByte(resumeAfter == null ? 0 : 1);
    if (resumeAfter != null) {
      w.writeLengthPrefixed(resumeAfter);
    }
    return w.toByteArray();
  }

  public static ScanSplit fromBytes(byte[] bytes) {
    try {
      ByteReader r = new ByteReader(bytes);
      int format = r.readVarInt();
      if (format != FORMAT) {
        throw new IllegalArgumentException("unsupported scan split format " + format);
      }
      String family = r.readString();
      String shard = r.readString();
      long id = r.readVarLong();
      int lo = r.readVarInt();
      int hi = r.readVarInt();
      int resumeBucket = r.readVarInt();
      byte[] after = r.readByte() == 1 ? r.readLengthPrefixed() : null;
      return new ScanSplit(family, shard, id, lo, hi, resumeBucket, after);
    } catch (IllegalStateException | IndexOutOfBoundsException e) {
      throw new IllegalArgumentException("not a serialised scan split: " + e.getMessage(), e);
    }
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ScanSplit)) {
      return false;
    }
    ScanSplit s = (ScanSplit) o;
    return family.equals(s.family)
        && shardId.equals(s.shardId)
        && snapshotId == s.snapshotId
        && lo == s.lo
        && hi == s.hi
        && resumeBucket == s.resumeBucket
        && Arrays.equals(resumeAfter, s.resumeAfter);
  }

  @Override
  public int hashCode() {
    return shardId.hashCode() * 31 + (int) snapshotId * 17 + lo;
  }

  @Override
  public String toString() {
    return family + "@" + shardId + "/" + snapshotId + "[" + lo + "-" + hi + "]";
  }
}
