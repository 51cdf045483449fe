package io.cobble.snapshot;

import io.cobble.schema.Schema;
import io.cobble.sst.TableProperties;
import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A published shard snapshot's manifest: the shard, snapshot id, bucket count and ranges, the
 * schema (and so its id), the next file number, and every table (tree, level) and value-log file
 * with its location on the snapshot volume. Stored in a {@link io.cobble.storage.MetadataFile}.
 */
public final class ShardSnapshot {
  private static final int FORMAT = 1;

  private final String shardId;
  private final long id;
  private final long createdMillis;
  private final int totalBuckets;
  private final List<BucketRange> ranges;
  private final Schema schema;
  private final long nextFileNumber;
  private final List<SnapshotFile> files;

  public ShardSnapshot(
      String shardId,
      long id,
      long createdMillis,
      int totalBuckets,
      List<BucketRange> ranges,
      Schema schema,
      long nextFileNumber,
      List<SnapshotFile> files) {
    this.shardId = shardId;
    this.id = id;
    this.createdMillis = createdMillis;
    this.totalBuckets = totalBuckets;
    this.ranges = Collections.unmodifiableList(new ArrayList<>(ranges));
    this.schema = schema;
    this.nextFileNumber = nextFileNumber;
    this.files = Collections.unmodifiableList(new ArrayList<>(files));
  }

  public String shardId() {
    return shardId;
  }

  public long id() {
    return id;
  }

  public long createdMillis() {
    return createdMillis;
  }

  public int totalBuckets() {
    return totalBuckets;
  }

  public List<BucketRange> ranges() {
    return ranges;
  }

  public Schema schema() {
    return schema;
  }

  public int schemaId() {
    return schema.id();
  }

  public long nextFileNumber() {
    return nextFileNumber;
  }

  public List<SnapshotFile> files() {
    return files;
  }

  public long dataBytes() {
    long n = 0;
    for (SnapshotFile f : files) {
      n += f.size();
    }
    return n;
  }

  public byte[] encode() {
    ByteWriter w = new ByteWriter(1024);
    w.writeVarInt(FORMAT);
    w.writeString(shardId);
    w.writeVarLong(id);
    w.writeVarLong(createdMillis);
    w.writeVarInt(totalBuckets);
    w.writeVarInt(ranges.size());
    for (BucketRange r : ranges) {
      w.writeVarInt(r.lo());
      w.writeVarInt(r.hi());
    }
    schema.encode(w);
    w.writeVarLong(nextFileNumber);
    w.writeVarInt(files.size());
    for (SnapshotFile f : files) {
      w.writeByte(f.isVlog() ? 1 : 0);
      w.writeVarLong(f.number());
      w.writeVarLong(f.size());
      w.writeString(f.volumePath());
      if (f.isVlog()) {
        w.writeVarLong(f.vlogEntries());
      } else {
        w.writeVarInt(f.family());
        w.writeVarInt(f.level());
        f.properties().encode(w);
      }
    }
    return w.toByteArray();
  }

  /**
   * Decodes a manifest payload (already checksum-verified by the metadata envelope).
   *
   * @throws IllegalStateException if the payload does not decode
   */
  public static ShardSnapshot decode(byte[] payload) {
    ByteReader r = new ByteReader(payload);
    int format = r.readVarInt();
    if (format != FORMAT) {
      throw new IllegalStateException("unsupported shard snapshot format " + format);
    }
    String shard = r.readString();
    long id = r.readVarLong();
    long created = r.readVarLong();
    int buckets = r.readVarInt();
    int nr = r.readVarInt();
    List<BucketRange> ranges = new ArrayList<>();
    for (int i = 0; i < nr; i++) {
      ranges.add(new BucketRange(r.readVarInt(), r.readVarInt()));
    }
    Schema schema = Schema.decode(r);
    long next = r.readVarLong();
    int nf = r.readVarInt();
    List<SnapshotFile> files = new ArrayList<>();
    for (int i = 0; i < nf; i++) {
      boolean vlog = r.readByte() == 1;
      long number = r.readVarLong();
      long size = r.readVarLong();
      String path = r.readString();
      if (vlog) {
        files.add(SnapshotFile.vlog(number, size, r.readVarLong(), path));
      } else {
        int family = r.readVarInt();
        int level = r.readVarInt();
        TableProperties props = TableProperties.decode(r);
        files.add(SnapshotFile.table(family, level, number, size, props, path));
      }
    }
    return new ShardSnapshot(shard, id, created, buckets, ranges, schema, next, files);
  }
}
