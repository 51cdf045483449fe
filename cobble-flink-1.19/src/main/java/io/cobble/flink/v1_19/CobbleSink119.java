package io.cobble.flink.v1_19;

import io.cobble.flink.shim.SinkWriterContext;
import io.cobble.flink.shim.SinkWriterFactory;
import java.io.IOException;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/**
 * The Cobble Sink V2 sink on Flink 1.19 and 1.20. Flink calls {@code
 * createWriter(WriterInitContext)}; the deprecated {@code InitContext} overload is still abstract
 * on this line, so it is implemented the same way. The committer of global snapshots will join here
 * through {@code SupportsCommitter}.
 */
final class CobbleSink119<T> implements Sink<T> {

  private static final long serialVersionUID = 1L;

  private final SinkWriterFactory<T> writers;

  CobbleSink119(SinkWriterFactory<T> writers) {
    this.writers = writers;
  }

  @Override
  public SinkWriter<T> createWriter(WriterInitContext context) throws IOException {
    return writers.createWriter(
        new SinkWriterContext(
            context.getTaskInfo().getIndexOfThisSubtask(),
            context.getTaskInfo().getNumberOfParallelSubtasks(),
            context.metricGroup()));
  }

  @Override
  @SuppressWarnings("deprecation")
  public SinkWriter<T> createWriter(InitContext context) throws IOException {
    return writers.createWriter(
        new SinkWriterContext(
            context.getSubtaskId(), context.getNumberOfParallelSubtasks(), context.metricGroup()));
  }
}
