package io.cobble.flink.table.sink;

import io.cobble.Db;
import io.cobble.DbMetrics;
import io.cobble.flink.table.codec.EncodeBuffer;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.BucketRouter;
import io.cobble.flink.table.layout.TableLayout;
import java.util.Arrays;
import java.util.function.ToLongFunction;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.MetricNames;
import org.apache.flink.table.data.RowData;

/**
 * Upserts rows into the writer's own shard: INSERT and UPDATE_AFTER replace every value column of
 * the key's row, DELETE and UPDATE_BEFORE remove the row. UPDATE_BEFORE must remove it: when a
 * filter sits above an updating aggregate, Flink sends UPDATE_BEFORE for a row that leaves the
 * filter and no UPDATE_AFTER follows (FLINK-9528), as upsert-kafka's tombstones assume. The removal
 * waits in a one-row buffer: an UPDATE_AFTER, INSERT or DELETE of the same key that comes next
 * replaces it, so the usual before/after pair costs one write; anything else, and every snapshot,
 * writes it first. Each row is one whole-row put ({@link Db#putRow}), encoded into buffers the
 * writer reuses, so a reader never sees half a row and a row allocates nothing on the way in.
 * Counts Flink's standard sink counters ({@code numRecordsSend}, {@code numBytesSend}) per write to
 * the shard and exposes the shard's engine metrics as gauges under {@code cobble}.
 */
final class ShardWriter {

  private final Db shard;
  private final int shardIndex;
  private final TableLayout layout;
  private final RowCodec codec;
  private EncodeBuffer key = new EncodeBuffer(64);
  private final EncodeBuffer values = new EncodeBuffer(256);
  private final int[] columnEnds;

  /** The shard's buckets, {@code [firstBucket, endBucket)}: resolved once, checked per row. */
  private final int firstBucket;

  private final int endBucket;

  /**
   * The key of an UPDATE_BEFORE not written yet, valid while {@link #removalPending}; it swaps
   * buffers with {@link #key}, so holding a key copies nothing.
   */
  private EncodeBuffer pendingKey = new EncodeBuffer(64);

  private int pendingBucket;
  private boolean removalPending;
  private final Counter recordsSent;
  private final Counter bytesSent;

  /** Whether rows were written since {@link #markSnapshotted}. */
  private boolean changed;

  /** Metric reporters may still poll the gauges after the shard is closed. */
  private volatile boolean closed;

  ShardWriter(Db shard, int shardIndex, TableLayout layout, RowCodec codec, MetricGroup metrics) {
    this.shard = shard;
    this.shardIndex = shardIndex;
    this.layout = layout;
    this.codec = codec;
    this.columnEnds = new int[codec.valueColumnCount()];
    this.firstBucket = layout.firstBucket(shardIndex);
    this.endBucket = layout.endBucket(shardIndex);
    this.recordsSent = metrics.counter(MetricNames.NUM_RECORDS_SEND);
    this.bytesSent = metrics.counter(MetricNames.NUM_BYTES_SEND);
    registerShardGauges(metrics.addGroup("cobble"));
  }

  void write(RowData row) {
    changed = true;
    codec.keyInto(row, key);
    int bucket = ownedBucket();
    if (removalPending && !samePendingKey()) {
      writePendingRemoval();
    }
    // A pending removal of this key is superseded by whatever this row writes.
    removalPending = false;
    switch (row.getRowKind()) {
      case INSERT:
      case UPDATE_AFTER:
        upsert(row, bucket);
        break;
      case DELETE:
        remove(key, bucket);
        break;
      case UPDATE_BEFORE:
        holdRemoval(bucket);
        break;
      default:
        throw new IllegalArgumentException("Unknown row kind " + row.getRowKind());
    }
  }

  /** Writes a removal still held back; called before every snapshot of the shard. */
  void flush() {
    if (removalPending) {
      writePendingRemoval();
      removalPending = false;
    }
  }

  private void upsert(RowData row, int bucket) {
    codec.valuesInto(row, values, columnEnds);
    shard.putRow(bucket, TableLayout.FAMILY, key.array(), key.size(), values.array(), columnEnds);
    recordsSent.inc();
    bytesSent.inc(key.size() + values.size());
  }

  private void remove(EncodeBuffer removed, int bucket) {
    shard.deleteRow(bucket, TableLayout.FAMILY, removed.toByteArray());
    recordsSent.inc();
    bytesSent.inc(removed.size());
  }

  private void holdRemoval(int bucket) {
    EncodeBuffer held = key;
    key = pendingKey;
    pendingKey = held;
    pendingBucket = bucket;
    removalPending = true;
  }

  private void writePendingRemoval() {
    remove(pendingKey, pendingBucket);
  }

  private boolean samePendingKey() {
    return Arrays.equals(key.array(), 0, key.size(), pendingKey.array(), 0, pendingKey.size());
  }

  /** The key's bucket, which must belong to this shard: the stream is partitioned by bucket. */
  private int ownedBucket() {
    int bucket = BucketRouter.bucketOf(key.array(), key.size(), layout.bucketCount());
    if (bucket < firstBucket || bucket >= endBucket) {
      throw new IllegalStateException(
          "A row of bucket "
              + bucket
              + " reached Cobble sink writer "
              + shardIndex
              + ", which owns buckets "
              + layout.bucketRanges(shardIndex)
              + "; the sink input must be partitioned by bucket.");
    }
    return bucket;
  }

  /**
   * Whether the shard changed since the last snapshot, so that an idle shard is not snapshotted.
   */
  boolean changedSinceSnapshot() {
    return changed;
  }

  void markSnapshotted() {
    changed = false;
  }

  /** Stops the gauges from reading the shard, which its owner is about to close. */
  void detach() {
    closed = true;
  }

  private void registerShardGauges(MetricGroup group) {
    gauge(group, "flushes", DbMetrics::flushes);
    gauge(group, "compactions", DbMetrics::compactions);
    gauge(group, "liveFiles", DbMetrics::liveFiles);
    gauge(group, "liveBytes", DbMetrics::liveBytes);
    gauge(group, "memtableBytes", DbMetrics::memtableBytes);
    gauge(group, "stallMillis", DbMetrics::stallMillis);
  }

  private void gauge(MetricGroup group, String name, ToLongFunction<DbMetrics> metric) {
    group.gauge(name, (Gauge<Long>) () -> closed ? 0L : metric.applyAsLong(shard.metrics()));
  }
}
