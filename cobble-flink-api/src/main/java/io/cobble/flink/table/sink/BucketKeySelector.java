package io.cobble.flink.table.sink;

import org.apache.flink.api.java.functions.KeySelector;

/**
 * The bucket of a {@link SinkRecord}, computed once when the row was encoded, so that the stream
 * can be partitioned by the writer owning it.
 */
final class BucketKeySelector implements KeySelector<byte[], Integer> {

  private static final long serialVersionUID = 1L;

  @Override
  public Integer getKey(byte[] record) {
    return SinkRecord.bucket(record);
  }
}
