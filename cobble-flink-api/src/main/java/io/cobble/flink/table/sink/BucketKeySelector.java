package io.cobble.flink.table.sink;

import io.cobble.flink.table.codec.EncodeBuffer;
import io.cobble.flink.table.codec.KeyEncoder;
import io.cobble.flink.table.layout.BucketRouter;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.table.data.RowData;

/** The bucket of a row, so that the stream can be partitioned by the writer owning it. */
final class BucketKeySelector implements KeySelector<RowData, Integer> {

  private static final long serialVersionUID = 1L;

  private final KeyEncoder keys;
  private final int bucketCount;

  /** The partitioner's own key buffer: one selector serves one task thread. */
  private transient EncodeBuffer key;

  BucketKeySelector(KeyEncoder keys, int bucketCount) {
    this.keys = keys;
    this.bucketCount = bucketCount;
  }

  @Override
  public Integer getKey(RowData row) {
    if (key == null) {
      key = new EncodeBuffer(64);
    }
    keys.encodeInto(row, key);
    return BucketRouter.bucketOf(key.array(), key.size(), bucketCount);
  }
}
