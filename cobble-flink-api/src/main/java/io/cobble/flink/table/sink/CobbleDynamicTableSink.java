package io.cobble.flink.table.sink;

import io.cobble.flink.table.TableStorage;
import io.cobble.flink.table.codec.KeyEncoder;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.TableSchemaFile;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

/**
 * The Cobble SQL sink of a validated table: upserts by primary key into bucketed shards, one global
 * snapshot per completed checkpoint (exactly-once), keeping {@code snapshot.retention} of them; a
 * bounded write ends with each shard's level 0 merged into level 1 unless {@code
 * sink.compact-at-end-of-input} is off.
 */
public final class CobbleDynamicTableSink implements DynamicTableSink {

  private final TableStorage table;
  private final TableSchemaFile schema;
  private final RowType rowType;
  private final long writerBufferBytes;
  private final boolean managedMemory;
  private final int retention;
  private final boolean compactAtEnd;

  public CobbleDynamicTableSink(
      TableStorage table,
      TableSchemaFile schema,
      RowType rowType,
      long writerBufferBytes,
      boolean managedMemory,
      int retention,
      boolean compactAtEnd) {
    this.table = table;
    this.schema = schema;
    this.rowType = rowType;
    this.writerBufferBytes = writerBufferBytes;
    this.managedMemory = managedMemory;
    this.retention = retention;
    this.compactAtEnd = compactAtEnd;
  }

  /**
   * Upserts by primary key; an insert-only query stays insert-only, since INSERT already overwrites
   * the key's row. Claiming upsert mode for it would make Flink 2.3+ demand an ON CONFLICT clause
   * for every query without an upsert key.
   */
  @Override
  public ChangelogMode getChangelogMode(ChangelogMode requestedMode) {
    return requestedMode.containsOnly(RowKind.INSERT)
        ? ChangelogMode.insertOnly()
        : ChangelogMode.upsert();
  }

  @Override
  public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
    int[] keyPositions = new int[schema.primaryKey().size()];
    List<LogicalType> keyTypes = new ArrayList<>();
    for (int i = 0; i < keyPositions.length; i++) {
      keyPositions[i] = rowType.getFieldIndex(schema.primaryKey().get(i));
      keyTypes.add(rowType.getTypeAt(keyPositions[i]));
    }
    return new CobbleSinkProvider(
        table,
        schema,
        new RowCodec(rowType, keyPositions, schema.slots()),
        new KeyEncoder(keyTypes, keyPositions),
        new WriterMemory(writerBufferBytes, managedMemory),
        retention,
        compactAtEnd);
  }

  @Override
  public DynamicTableSink copy() {
    return new CobbleDynamicTableSink(
        table, schema, rowType, writerBufferBytes, managedMemory, retention, compactAtEnd);
  }

  @Override
  public String asSummaryString() {
    return "Cobble sink";
  }
}
