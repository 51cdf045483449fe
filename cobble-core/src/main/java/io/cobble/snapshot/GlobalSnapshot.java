package io.cobble.snapshot;

import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A numbered global snapshot: one shard snapshot per bucket range, together covering every bucket
 * exactly once. Stored as {@code global/global-<n>} in a metadata envelope; {@code global/CURRENT}
 * names the newest. Format 2 adds the id of the checkpoint the snapshot was committed for (format 1
 * manifests read as {@link #NO_CHECKPOINT}).
 */
public final class GlobalSnapshot {
  private static final int FORMAT_V1 = 1;
  private static final int FORMAT = 2;

  /** {@link #checkpointId()} of a snapshot that records none. */
  public static final long NO_CHECKPOINT = 0;

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
  private final long checkpointId;

  public GlobalSnapshot(long id, int totalBuckets, List<Part> parts) {
    this(id, totalBuckets, parts, NO_CHECKPOINT);
  }

  public GlobalSnapshot(long id, int totalBuckets, List<Part> parts, long checkpointId) {
    if (checkpointId < 0) {
      throw new IllegalArgumentException("invalid checkpoint id " + checkpointId + ": need >= 0");
    }
    this.id = id;
    this.totalBuckets = totalBuckets;
    this.parts = Collections.unmodifiableList(new ArrayList<>(parts));
    this.checkpointId = checkpointId;
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

  /**
   * The id of the checkpoint (of the committing job) this snapshot was committed for, or {@link
   * #NO_CHECKPOINT} when the committer gave none or the manifest predates checkpoint ids.
   */
  public long checkpointId() {
    return checkpointId;
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
    w.writeVarLong(checkpointId);
    return w.toByteArray();
  }

  static GlobalSnapshot decode(byte[] payload) {
    ByteReader r = new ByteReader(payload);
    int format = r.readVarInt();
    if (format != FORMAT && format != FORMAT_V1) {
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
    long checkpointId = format == FORMAT_V1 ? NO_CHECKPOINT : r.readVarLong();
    return new GlobalSnapshot(id, buckets, parts, checkpointId);
  }
}
