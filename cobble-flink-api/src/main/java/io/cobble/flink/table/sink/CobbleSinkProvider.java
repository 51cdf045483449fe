package io.cobble.flink.table.sink;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.table.codec.KeyEncoder;
import io.cobble.flink.table.layout.TableLayout;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.sink.DataStreamSinkProvider;
import org.apache.flink.table.data.RowData;

/**
 * Puts the sink into the job: the rows are partitioned by bucket to the writer owning it, then
 * written by the line's Sink V2 sink at {@code sink.parallelism}. A {@code SinkV2Provider} cannot
 * partition its input on every line (pre-write topologies differ between 1.17 and 1.19+), while
 * {@code DataStreamSinkProvider} and {@code partitionCustom} link unchanged from 1.17 to 2.x.
 */
final class CobbleSinkProvider implements DataStreamSinkProvider {

  private final CobbleSinkWriterFactory writers;
  private final KeyEncoder keys;
  private final TableLayout layout;
  private final String name;

  CobbleSinkProvider(
      CobbleSinkWriterFactory writers, KeyEncoder keys, TableLayout layout, String name) {
    this.writers = writers;
    this.keys = keys;
    this.layout = layout;
    this.name = name;
  }

  @Override
  public DataStreamSink<?> consumeDataStream(
      ProviderContext context, DataStream<RowData> dataStream) {
    DataStreamSink<RowData> sink =
        dataStream
            .partitionCustom(
                new BucketPartitioner(layout), new BucketKeySelector(keys, layout.bucketCount()))
            .sinkTo(ShimLoader.current().sink(writers))
            .name(name)
            .setParallelism(layout.shardCount());
    context.generateUid("cobble-sink").ifPresent(sink::uid);
    return sink;
  }
}
