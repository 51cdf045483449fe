package io.cobble.flink.table.sink;

import io.cobble.flink.table.codec.EncodeBuffer;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.BucketRouter;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;

/**
 * Encodes each row into a {@link SinkRecord} in the source task, chained to the operator that
 * produced the row: the key and values are encoded into buffers it reuses, and the record is the
 * one array the shuffle needs anyway.
 */
final class SinkRecordEncoder implements MapFunction<RowData, byte[]> {

  private static final long serialVersionUID = 1L;

  private final RowCodec codec;
  private final int bucketCount;

  /** The encoder's own buffers: one instance serves one task thread. */
  private transient EncodeBuffer key;

  private transient EncodeBuffer values;
  private transient int[] columnEnds;

  SinkRecordEncoder(RowCodec codec, int bucketCount) {
    this.codec = codec;
    this.bucketCount = bucketCount;
  }

  @Override
  public byte[] map(RowData row) {
    if (key == null) {
      key = new EncodeBuffer(64);
      values = new EncodeBuffer(256);
      columnEnds = new int[codec.valueColumnCount()];
    }
    codec.keyInto(row, key);
    int keyLength = key.size();
    int bucket = BucketRouter.bucketOf(key.array(), keyLength, bucketCount);
    RowKind kind = row.getRowKind();
    boolean withValues = SinkRecord.writesValues(kind);
    int columns = withValues ? columnEnds.length : 0;
    int valuesSize = 0;
    if (withValues) {
      codec.valuesInto(row, values, columnEnds);
      valuesSize = values.size();
    }
    byte[] record = new byte[SinkRecord.KEY_START + keyLength + 4 * columns + valuesSize];
    record[0] = kind.toByteValue();
    SinkRecord.writeInt(record, 1, bucket);
    SinkRecord.writeInt(record, 5, keyLength);
    System.arraycopy(key.array(), 0, record, SinkRecord.KEY_START, keyLength);
    int at = SinkRecord.KEY_START + keyLength;
    for (int i = 0; i < columns; i++, at += 4) {
      SinkRecord.writeInt(record, at, columnEnds[i]);
    }
    System.arraycopy(values.array(), 0, record, at, valuesSize);
    return record;
  }
}
