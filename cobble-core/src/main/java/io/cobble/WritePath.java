package io.cobble;

import io.cobble.memtable.MemTable;
import io.cobble.merge.MergeOperator;
import io.cobble.row.ColumnLayout;
import io.cobble.row.Layouts;
import io.cobble.row.RowState;
import io.cobble.util.ByteWriter;
import io.cobble.version.Version;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Puts, merges and deletes into the active memtable: validates them, encodes each as a row delta
 * under its internal key (family, bucket, user key), and makes room first, rotating a full memtable
 * and stalling while flushes or L0 compactions lag behind. Writes are serialised by the shard's
 * mutex.
 */
final class WritePath {
  private final ShardState state;
  private final Flusher flusher;
  // Both null unless the Db shares a MemoryPool.
  private final MemoryPool pool;
  private final MemoryPool.Member pooled;
  // Used under the mutex only. Not thread-local: a Flink task thread carries many thread locals,
  // and looking one up per row cost a sink writer about a sixth of its time (hash-probe misses).
  private final Buffers buffers = new Buffers();
  // The family the last write named: a writer of one family (a sink shard) then skips the by-name
  // map on every row, about a tenth of a put. Read and written without the mutex, which is safe as
  // a ColumnLayout is immutable; layout() rejects one of an older schema.
  private ColumnLayout lastFamily;
  private final AtomicLong stallWaits = new AtomicLong();
  private final AtomicLong stallNanos = new AtomicLong();

  /** Key and row buffers, so a write allocates only what the memtable keeps. */
  private static final class Buffers {
    final ByteWriter key = new ByteWriter(64);
    final ByteWriter row = new ByteWriter(128);

    /** Encodes the internal key (family id, bucket, user key) into {@link #key}. */
    void key(ColumnLayout layout, int bucket, byte[] userKey, int userKeyLen) {
      key.reset();
      key.writeByte(layout.familyId() >>> 8);
      key.writeByte(layout.familyId());
      key.writeByte(bucket >>> 8);
      key.writeByte(bucket);
      key.writeBytes(userKey, 0, userKeyLen);
    }
  }

  WritePath(ShardState state, Flusher flusher, MemoryPool pool, MemoryPool.Member pooled) {
    this.state = state;
    this.flusher = flusher;
    this.pool = pool;
    this.pooled = pooled;
  }

  long stallWaits() {
    return stallWaits.get();
  }

  long stallNanos() {
    return stallNanos.get();
  }

  void writeOne(
      WriteBatch.Kind kind,
      int bucket,
      String family,
      byte[] key,
      int column,
      byte[] value,
      long ttl) {
    state.checkOpen();
    RequestChecks.checkWrite(
        state.layouts(), state.ownership, kind, bucket, family, key, column, value, ttl);
    state.mutex.lock();
    try {
      makeRoomForWrite();
      encodeDelta(state.layouts(), kind, bucket, family, key, column, value, ttl);
      Buffers b = buffers;
      state
          .versions
          .current()
          .active()
          .put(b.key.array(), b.key.size(), b.row.array(), b.row.size());
    } finally {
      state.mutex.unlock();
    }
  }

  void write(WriteBatch batch) {
    state.checkOpen();
    Layouts l = state.layouts();
    for (WriteBatch.Op op : batch.ops) {
      RequestChecks.checkWrite(
          l, state.ownership, op.kind, op.bucket, op.family, op.key, op.column, op.value, op.ttl);
    }
    state.mutex.lock();
    try {
      makeRoomForWrite();
      // Operations on the same row are folded into one delta so readers never see half of them.
      Map<ByteBuffer, byte[]> rows = new LinkedHashMap<>();
      Buffers b = buffers;
      for (WriteBatch.Op op : batch.ops) {
        encodeDelta(
            state.layouts(), op.kind, op.bucket, op.family, op.key, op.column, op.value, op.ttl);
        byte[] key = b.key.toByteArray();
        byte[] delta = b.row.toByteArray();
        rows.merge(
            ByteBuffer.wrap(key), delta, (older, newer) -> state.fold.combine(key, older, newer));
      }
      MemTable mem = state.versions.current().active();
      for (Map.Entry<ByteBuffer, byte[]> e : rows.entrySet()) {
        byte[] key = e.getKey().array();
        mem.put(key, key.length, e.getValue(), e.getValue().length);
      }
    } finally {
      state.mutex.unlock();
    }
  }

  /** See {@link Db#putColumns}. */
  void putColumns(
      int bucket,
      String family,
      int column,
      byte[] keys,
      int[] keyEnds,
      byte[] values,
      int[] valueEnds,
      int count) {
    state.checkOpen();
    state.ownership.checkBucket(bucket);
    ColumnLayout layout = layout(state.layouts(), family);
    layout.checkColumn(column);
    if (count < 0 || count > keyEnds.length || count > valueEnds.length) {
      throw new IllegalArgumentException(
          "count " + count + " does not fit the key and value ends of '" + family + "'");
    }
    int keyStart = 0;
    int valueStart = 0;
    for (int i = 0; i < count; i++) {
      if (keyEnds[i] < keyStart || valueEnds[i] < valueStart) {
        throw new IllegalArgumentException(
            "key or value ends of '" + family + "' decrease at row " + i);
      }
      keyStart = keyEnds[i];
      valueStart = valueEnds[i];
    }
    if (keyStart > keys.length || valueStart > values.length) {
      throw new IllegalArgumentException(
          "key or value ends of '" + family + "' pass the end of their array");
    }
    MergeOperator op = layout.operator(column);
    boolean elementTtl = op != null && op.elementTtl();
    // Every row puts this one column, so it replaces its key's older deltas exactly when the
    // family has no other column (RowState.replacesOlder): decided once, not per row.
    boolean replacesOlder = layout.size() == 1;
    state.mutex.lock();
    try {
      makeRoomForWrite();
      MemTable mem = state.versions.current().active();
      long ttl = state.config.defaultTtlMillis();
      long expiry = ttl == 0 ? 0 : state.clock.nowMillis() + ttl;
      Buffers b = buffers;
      keyStart = 0;
      valueStart = 0;
      for (int i = 0; i < count; i++) {
        b.key.reset();
        b.key.writeByte(layout.familyId() >>> 8);
        b.key.writeByte(layout.familyId());
        b.key.writeByte(bucket >>> 8);
        b.key.writeByte(bucket);
        b.key.writeBytes(keys, keyStart, keyEnds[i] - keyStart);
        ByteWriter w = b.row;
        w.reset();
        w.writeVarInt(1);
        w.writeVarInt(layout.id(column));
        w.writeByte(RowState.PUT);
        if (elementTtl) {
          w.writeVarLong(0);
          w.writeLengthPrefixed(
              op.toStored(Arrays.copyOfRange(values, valueStart, valueEnds[i]), expiry));
        } else {
          w.writeVarLong(expiry);
          w.writeVarInt(valueEnds[i] - valueStart);
          w.writeBytes(values, valueStart, valueEnds[i] - valueStart);
        }
        mem.put(b.key.array(), b.key.size(), w.array(), w.size(), replacesOlder);
        keyStart = keyEnds[i];
        valueStart = valueEnds[i];
      }
    } finally {
      state.mutex.unlock();
    }
  }

  /** See {@link Db#putRow}. */
  void putRow(int bucket, String family, byte[] key, int keyLen, byte[] values, int[] columnEnds) {
    state.checkOpen();
    state.ownership.checkBucket(bucket);
    RequestChecks.checkKey(key);
    ColumnLayout layout = layout(state.layouts(), family);
    RequestChecks.checkRowShape(layout, family, key, keyLen, values, columnEnds);
    Config config = state.config;
    state.mutex.lock();
    try {
      makeRoomForWrite();
      Buffers b = buffers;
      b.key(layout, bucket, key, keyLen);
      ByteWriter w = b.row;
      w.reset();
      w.writeVarInt(layout.size());
      long expiry =
          config.defaultTtlMillis() == 0 ? 0 : state.clock.nowMillis() + config.defaultTtlMillis();
      int start = 0;
      for (int i = 0; i < layout.size(); i++) {
        int end = columnEnds[i];
        w.writeVarInt(layout.id(i));
        w.writeByte(RowState.PUT);
        MergeOperator op = layout.operator(i);
        if (op != null && op.elementTtl()) {
          w.writeVarLong(0);
          w.writeLengthPrefixed(op.toStored(Arrays.copyOfRange(values, start, end), expiry));
        } else {
          w.writeVarLong(expiry);
          w.writeVarInt(end - start);
          w.writeBytes(values, start, end - start);
        }
        start = end;
      }
      state.versions.current().active().put(b.key.array(), b.key.size(), w.array(), w.size(), true);
    } finally {
      state.mutex.unlock();
    }
  }

  /** {@code family}'s layout in {@code l}, as {@link Layouts#require}. */
  private ColumnLayout layout(Layouts l, String family) {
    ColumnLayout last = lastFamily;
    if (last != null && last.family().name().equals(family) && l.byId(last.familyId()) == last) {
      return last;
    }
    ColumnLayout resolved = l.require(family);
    lastFamily = resolved;
    return resolved;
  }

  /**
   * Encodes the memtable key and a one-column (or all-column delete) delta into the thread's
   * buffers. Under the mutex.
   */
  private void encodeDelta(
      Layouts l,
      WriteBatch.Kind kind,
      int bucket,
      String family,
      byte[] key,
      int column,
      byte[] value,
      long ttl) {
    ColumnLayout layout = layout(l, family);
    Buffers b = buffers;
    b.key(layout, bucket, key, key.length);
    ByteWriter w = b.row;
    w.reset();
    MemTable mem = state.versions.current().active();
    if (kind == WriteBatch.Kind.DELETE_ROW) {
      w.writeVarInt(layout.size());
      for (int i = 0; i < layout.size(); i++) {
        w.writeVarInt(layout.id(i));
        w.writeByte(RowState.DELETE);
      }
    } else {
      w.writeVarInt(1);
      w.writeVarInt(layout.id(column));
      if (kind == WriteBatch.Kind.DELETE) {
        w.writeByte(RowState.DELETE);
      } else {
        long now = state.clock.nowMillis();
        long effectiveTtl = ttl == WriteBatch.DEFAULT_TTL ? state.config.defaultTtlMillis() : ttl;
        long expiry = effectiveTtl == 0 ? 0 : now + effectiveTtl;
        MergeOperator op = layout.operator(column);
        byte[] stored = value;
        if (op != null && op.elementTtl()) {
          stored = op.toStored(value, expiry);
          expiry = 0;
        }
        if (kind == WriteBatch.Kind.PUT) {
          w.writeByte(RowState.PUT);
          w.writeVarLong(expiry);
        } else {
          w.writeByte(RowState.MERGE);
          w.writeVarLong(expiry);
          w.writeVarLong(now);
          mem.noteMerge(now);
        }
        w.writeLengthPrefixed(stored);
      }
    }
  }

  /**
   * Blocks while memtables are full, L0 is over the stall limit or the shared memory pool's
   * memtables are over its budget; rotates the memtable.
   */
  private void makeRoomForWrite() {
    Config config = state.config;
    long stallStart = 0;
    try {
      while (true) {
        state.checkOpen();
        Throwable bg = state.backgroundError();
        if (bg != null) {
          throw new CobbleException(
              "background work failed; writes are disabled: " + bg.getMessage(), bg);
        }
        Version v = state.versions.current();
        boolean stall =
            v.immutables().size() + v.maxL0Files() > config.writeStallLimit()
                || (pool != null && !pool.admit(pooled));
        if (!stall) {
          long active = v.active().approximateBytes();
          if (active < config.memtableCapacity()) {
            flusher.writing(active);
            return;
          }
          if (v.immutables().size() < config.memtableBufferCount() - 1) {
            flusher.rotateMemTable();
            return;
          }
        }
        Throwable failed = flusher.stuckFailure();
        if (failed != null) {
          // The memtables are full because their flush failed: retry it, and fail this write
          // rather than wait for a volume that may stay away.
          flusher.schedule();
          throw new CobbleException(
              "cannot write: memtables are full and their flush to "
                  + state.remote.storage().uri()
                  + " failed ("
                  + failed.getMessage()
                  + "); a retry is running",
              failed);
        }
        if (stallStart == 0) {
          stallStart = System.nanoTime();
          stallWaits.incrementAndGet();
        }
        try {
          state.changed.await(50, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new CobbleException("interrupted while waiting for a flush or compaction", e);
        }
      }
    } finally {
      if (stallStart != 0) {
        stallNanos.addAndGet(System.nanoTime() - stallStart);
      }
    }
  }
}
