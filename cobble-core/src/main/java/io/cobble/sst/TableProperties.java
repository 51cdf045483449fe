package io.cobble.sst;

import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * Summary of a table kept in its properties block and mirrored in the manifest: key range, entry
 * count, schema id, expiry bounds (for whole-file drops) and value-log references.
 */
public final class TableProperties {
  private final long entries;
  private final byte[] smallest;
  private final byte[] largest;
  private final int schemaId;
  private final long maxExpiry;
  private final long minMergeWriteTime;
  private final Map<Long, Long> vlogRefs;

  public TableProperties(
      long entries,
      byte[] smallest,
      byte[] largest,
      int schemaId,
      long maxExpiry,
      long minMergeWriteTime,
      Map<Long, Long> vlogRefs) {
    this.entries = entries;
    this.smallest = smallest;
    this.largest = largest;
    this.schemaId = schemaId;
    this.maxExpiry = maxExpiry;
    this.minMergeWriteTime = minMergeWriteTime;
    this.vlogRefs = Collections.unmodifiableMap(new TreeMap<>(vlogRefs));
  }

  public long entries() {
    return entries;
  }

  public byte[] smallest() {
    return smallest;
  }

  public byte[] largest() {
    return largest;
  }

  public int schemaId() {
    return schemaId;
  }

  /** Latest expiry of any value; 0 when some value never expires, -1 when there is none. */
  public long maxExpiry() {
    return maxExpiry;
  }

  /** Earliest write time of a merge stored here; Long.MAX_VALUE when there is none. */
  public long minMergeWriteTime() {
    return minMergeWriteTime;
  }

  /** Value-log file number to the number of pointers into it held by this table. */
  public Map<Long, Long> vlogRefs() {
    return vlogRefs;
  }

  public void encode(ByteWriter w) {
    w.writeVarLong(entries);
    w.writeLengthPrefixed(smallest);
    w.writeLengthPrefixed(largest);
    w.writeVarInt(schemaId);
    w.writeLong(maxExpiry);
    w.writeLong(minMergeWriteTime);
    w.writeVarInt(vlogRefs.size());
    for (Map.Entry<Long, Long> e : vlogRefs.entrySet()) {
      w.writeVarLong(e.getKey());
      w.writeVarLong(e.getValue());
    }
  }

  public static TableProperties decode(ByteReader r) {
    long entries = r.readVarLong();
    byte[] smallest = r.readLengthPrefixed();
    byte[] largest = r.readLengthPrefixed();
    int schemaId = r.readVarInt();
    long maxExpiry = r.readLong();
    long minMerge = r.readLong();
    int n = r.readVarInt();
    Map<Long, Long> refs = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      refs.put(r.readVarLong(), r.readVarLong());
    }
    return new TableProperties(entries, smallest, largest, schemaId, maxExpiry, minMerge, refs);
  }
}
