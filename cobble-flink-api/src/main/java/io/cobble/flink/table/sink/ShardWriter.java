package io.cobble.flink.table.sink;

import io.cobble.Db;
import io.cobble.DbMetrics;
import io.cobble.WriteBatch;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.BucketRouter;
import io.cobble.flink.table.layout.TableLayout;
import java.util.function.ToLongFunction;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.MetricNames;
import org.apache.flink.table.data.RowData;

/**
 * Upserts rows into the writer's own shard: INSERT and UPDATE_AFTER replace every value column of
 * the key's row, DELETE removes the row, UPDATE_BEFORE is skipped (the UPDATE_AFTER that follows
 * carries the new row). Each row is one atomic write batch, so a reader never sees half a row.
 * Counts Flink's standard sink counters ({@code numRecordsSend}, {@code numBytesSend}) and exposes
 * the shard's engine metrics as gauges under {@code cobble}.
 */
final class ShardWriter {

  private final Db shard;
  private final int shardIndex;
  private final TableLayout layout;
  private final RowCodec codec;
  private final WriteBatch batch = new WriteBatch();
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
    this.recordsSent = metrics.counter(MetricNames.NUM_RECORDS_SEND);
    this.bytesSent = metrics.counter(MetricNames.NUM_BYTES_SEND);
    registerShardGauges(metrics.addGroup("cobble"));
  }

  void write(RowData row) {
    changed = true;
    switch (row.getRowKind()) {
      case INSERT:
      case UPDATE_AFTER:
        upsert(row);
        break;
      case DELETE:
        delete(row);
        break;
      case UPDATE_BEFORE:
        break;
      default:
        throw new IllegalArgumentException("Unknown row kind " + row.getRowKind());
    }
  }

  private void upsert(RowData row) {
    byte[] key = codec.key(row);
    int bucket = ownedBucket(key);
    byte[][] values = codec.values(row);
    long bytes = key.length;
    batch.clear();
    for (int column = 0; column < values.length; column++) {
      batch.put(bucket, TableLayout.FAMILY, key, column, values[column]);
      bytes += values[column].length;
    }
    shard.write(batch);
    recordsSent.inc();
    bytesSent.inc(bytes);
  }

  private void delete(RowData row) {
    byte[] key = codec.key(row);
    shard.deleteRow(ownedBucket(key), TableLayout.FAMILY, key);
    recordsSent.inc();
    bytesSent.inc(key.length);
  }

  /** The key's bucket, which must belong to this shard: the stream is partitioned by bucket. */
  private int ownedBucket(byte[] key) {
    int bucket = BucketRouter.bucketOf(key, layout.bucketCount());
    if (layout.shardOf(bucket) != shardIndex) {
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
