package io.cobble.flink.table.sink;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.table.TableStorage;
import io.cobble.flink.table.codec.KeyEncoder;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.flink.table.layout.TableSchemaFile;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.sink.DataStreamSinkProvider;
import org.apache.flink.table.data.RowData;

/**
 * Puts the sink into the job: rows are partitioned by bucket to the writer owning it ({@code
 * sink.parallelism} writers), the writers' shard snapshots go to one committer (parallelism and max
 * parallelism 1) that publishes the global snapshots, and a discarding sink closes the topology.
 * Plain operators rather than a Sink V2 sink: their API links unchanged from 1.17 to 2.x, while the
 * committing Sink V2 interfaces differ on every line and cannot partition their input.
 */
final class CobbleSinkProvider implements DataStreamSinkProvider {

  private final TableStorage table;
  private final TableSchemaFile schema;
  private final RowCodec codec;
  private final KeyEncoder keys;
  private final WriterMemory memory;
  private final int retention;
  private final boolean compactAtEnd;

  CobbleSinkProvider(
      TableStorage table,
      TableSchemaFile schema,
      RowCodec codec,
      KeyEncoder keys,
      WriterMemory memory,
      int retention,
      boolean compactAtEnd) {
    this.table = table;
    this.schema = schema;
    this.codec = codec;
    this.keys = keys;
    this.memory = memory;
    this.retention = retention;
    this.compactAtEnd = compactAtEnd;
  }

  @Override
  public DataStreamSink<?> consumeDataStream(
      ProviderContext context, DataStream<RowData> dataStream) {
    TableLayout layout = new TableLayout(schema.bucketCount(), schema.shardCount());
    String name = "Cobble sink: " + table.root();
    SingleOutputStreamOperator<ShardCommit> written =
        dataStream
            .partitionCustom(
                new BucketPartitioner(layout), new BucketKeySelector(keys, layout.bucketCount()))
            .transform(
                name + " (writer)",
                TypeInformation.of(ShardCommit.class),
                new CobbleSinkWriterOperator(table, schema, codec, memory, compactAtEnd))
            .setParallelism(layout.shardCount());
    memory.declareOn(written.getTransformation());
    context.generateUid("cobble-sink-writer").ifPresent(written::uid);
    SingleOutputStreamOperator<Void> committed =
        written
            .transform(
                name + " (committer)",
                Types.VOID,
                new CobbleSinkCommitter(table, layout.bucketCount(), retention))
            .setParallelism(1)
            .setMaxParallelism(1);
    context.generateUid("cobble-sink-committer").ifPresent(committed::uid);
    DataStreamSink<Void> sink =
        committed.sinkTo(ShimLoader.current().discardingSink()).name(name).setParallelism(1);
    context.generateUid("cobble-sink").ifPresent(sink::uid);
    return sink;
  }
}
