package io.cobble.flink.table.sink;

import io.cobble.flink.table.codec.KeyEncoder;
import io.cobble.flink.table.layout.BucketRouter;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.table.data.RowData;

/** The bucket of a row, so that the stream can be partitioned by the writer owning it. */
final class BucketKeySelector implements KeySelector<RowData, Integer> {

  private static final long serialVersionUID = 1L;

  private final KeyEncoder keys;
  private final int bucketCount;

  BucketKeySelector(KeyEncoder keys, int bucketCount) {
    this.keys = keys;
    this.bucketCount = bucketCount;
  }

  @Override
  public Integer getKey(RowData row) {
    return BucketRouter.bucketOf(keys.encode(row), bucketCount);
  }
}
