package io.cobble.flink.v2_0;

import io.cobble.flink.shim.SinkWriterContext;
import io.cobble.flink.shim.SinkWriterFactory;
import java.io.IOException;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/**
 * The Cobble Sink V2 sink on Flink 2.0 and later, where {@code createWriter(WriterInitContext)} is
 * the only entry point. The committer of global snapshots will join here through {@code
 * SupportsCommitter}.
 */
final class CobbleSink20<T> implements Sink<T> {

  private static final long serialVersionUID = 1L;

  private final SinkWriterFactory<T> writers;

  CobbleSink20(SinkWriterFactory<T> writers) {
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
}
