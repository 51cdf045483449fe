package io.cobble.snapshot;

import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A numbered global snapshot: one shard snapshot per bucket range, together covering every bucket
 * exactly once. Stored as {@code global/global-<n>} in a metadata envelope; {@code global/CURRENT}
 * names the newest.
 */
public final class GlobalSnapshot {
  private static final int FORMAT = 1;

  /** One shard snapshot of a global snapshot and the ranges it serves. */
  public static final class Part {
    private final String shardId;
    private final long snapshotId;
    private final List<BucketRange> ranges;

    public Part(String shardId, long snapshotId, List<BucketRange> ranges) {
      this.shardId = shardId;
      this.snapshotId = snapshotId;
      this.ranges = Collections.unmodifiableList(new ArrayList<>(ranges));
    }

    public String shardId() {
      return shardId;
    }

    public long snapshotId() {
      return snapshotId;
    }

    public List<BucketRange> ranges() {
      return ranges;
    }
  }

  private final long id;
  private final int totalBuckets;
  private final List<Part> parts;

  public GlobalSnapshot(long id, int totalBuckets, List<Part> parts) {
    this.id = id;
    this.totalBuckets = totalBuckets;
    this.parts = Collections.unmodifiableList(new ArrayList<>(parts));
  }

  public long id() {
    return id;
  }

  public int totalBuckets() {
    return totalBuckets;
  }

  public List<Part> parts() {
    return parts;
  }

  /** The part serving {@code bucket}. */
  public Part partFor(int bucket) {
    for (Part p : parts) {
      for (BucketRange r : p.ranges()) {
        if (r.contains(bucket)) {
          return p;
        }
      }
    }
    throw new IllegalArgumentException(
        "bucket " + bucket + " out of range: valid buckets are 0.." + (totalBuckets - 1));
  }

  byte[] encode() {
    ByteWriter w = new ByteWriter(256);
    w.writeVarInt(FORMAT);
    w.writeVarLong(id);
    w.writeVarInt(totalBuckets);
    w.writeVarInt(parts.size());
    for (Part p : parts) {
      w.writeString(p.shardId);
      w.writeVarLong(p.snapshotId);
      w.writeVarInt(p.ranges.size());
      for (BucketRange r : p.ranges) {
        w.writeVarInt(r.lo());
        w.writeVarInt(r.hi());
      }
    }
    return w.toByteArray();
  }

  static GlobalSnapshot decode(byte[] payload) {
    ByteReader r = new ByteReader(payload);
    int format = r.readVarInt();
    if (format != FORMAT) {
      throw new IllegalStateException("unsupported global snapshot format " + format);
    }
    long id = r.readVarLong();
    int buckets = r.readVarInt();
    int n = r.readVarInt();
    List<Part> parts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String shard = r.readString();
      long sid = r.readVarLong();
      int nr = r.readVarInt();
      List<BucketRange> ranges = new ArrayList<>();
      for (int j = 0; j < nr; j++) {
        ranges.add(new BucketRange(r.readVarInt(), r.readVarInt()));
      }
      parts.add(new Part(shard, sid, ranges));
    }
    return new GlobalSnapshot(id, buckets, parts);
  }
}
