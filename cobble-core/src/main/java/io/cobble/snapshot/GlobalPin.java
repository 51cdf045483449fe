package io.cobble.snapshot;

import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.util.Collection;
import java.util.Collections;
import java.util.Set;
import java.util.TreeSet;

/**
 * A lease of one reader (its owner) on global snapshots: while it has not expired, retention keeps
 * those global snapshots and so every shard snapshot and file they reference. The owner renews it
 * before {@link #expiresAtMillis()}; a reader that dies stops renewing, and its pin stops holding
 * anything back once it expires. Stored as {@code global-pins/<owner>} in a metadata envelope.
 */
public final class GlobalPin {
  private static final int FORMAT = 1;

  private final String owner;
  private final Set<Long> globalIds;
  private final long expiresAtMillis;

  public GlobalPin(String owner, Collection<Long> globalIds, long expiresAtMillis) {
    this.owner = SnapshotStore.checkShardId(owner);
    this.globalIds = Collections.unmodifiableSet(new TreeSet<>(globalIds));
    this.expiresAtMillis = expiresAtMillis;
  }

  public String owner() {
    return owner;
  }

  /** The pinned global snapshot ids, ascending. */
  public Set<Long> globalIds() {
    return globalIds;
  }

  /** Wall-clock time (epoch milliseconds) after which the pin holds nothing. */
  public long expiresAtMillis() {
    return expiresAtMillis;
  }

  public boolean expiredAt(long nowMillis) {
    return nowMillis >= expiresAtMillis;
  }

  byte[] encode() {
    ByteWriter w = new ByteWriter(32 + globalIds.size() * 4);
    w.writeVarInt(FORMAT);
    w.writeVarLong(expiresAtMillis);
    w.writeVarInt(globalIds.size());
    for (long id : globalIds) {
      w.writeVarLong(id);
    }
    return w.toByteArray();
  }

  static GlobalPin decode(String owner, byte[] payload) {
    ByteReader r = new ByteReader(payload);
    int format = r.readVarInt();
    if (format != FORMAT) {
      throw new IllegalStateException("unsupported global pin format " + format);
    }
    long expires = r.readVarLong();
    int n = r.readVarInt();
    Set<Long> ids = new TreeSet<>();
    for (int i = 0; i < n; i++) {
      ids.add(r.readVarLong());
    }
    return new GlobalPin(owner, ids, expires);
  }

  @Override
  public String toString() {
    return "pin of " + owner + " on global snapshots " + globalIds + " until " + expiresAtMillis;
  }
}
