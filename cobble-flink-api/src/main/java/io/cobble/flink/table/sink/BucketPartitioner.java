package io.cobble.flink.table.sink;

import io.cobble.flink.table.layout.TableLayout;
import org.apache.flink.api.common.functions.Partitioner;

/** Sends a bucket to the writer that owns its contiguous range ({@link TableLayout#shardOf}). */
final class BucketPartitioner implements Partitioner<Integer> {

  private static final long serialVersionUID = 1L;

  private final TableLayout layout;

  BucketPartitioner(TableLayout layout) {
    this.layout = layout;
  }

  @Override
  public int partition(Integer bucket, int numPartitions) {
    if (numPartitions != layout.shardCount()) {
      throw new IllegalStateException(
          "The Cobble sink runs with "
              + numPartitions
              + " writers but the table has "
              + layout.shardCount()
              + " shards; 'sink.parallelism' fixes the writer count, do not rescale the sink.");
    }
    return layout.shardOf(bucket);
  }
}
