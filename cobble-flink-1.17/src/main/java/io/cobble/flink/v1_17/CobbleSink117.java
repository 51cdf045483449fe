package io.cobble.flink.v1_17;

import io.cobble.flink.shim.SinkWriterContext;
import io.cobble.flink.shim.SinkWriterFactory;
import java.io.IOException;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;

/**
 * The Cobble Sink V2 sink on Flink 1.17 and 1.18, where writers are created from {@code
 * Sink.InitContext}. The committer of global snapshots will join here as a {@code
 * TwoPhaseCommittingSink}.
 */
final class CobbleSink117<T> implements Sink<T> {

  private static final long serialVersionUID = 1L;

  private final SinkWriterFactory<T> writers;

  CobbleSink117(SinkWriterFactory<T> writers) {
    this.writers = writers;
  }

  @Override
  public SinkWriter<T> createWriter(InitContext context) throws IOException {
    return writers.createWriter(
        new SinkWriterContext(
            context.getSubtaskId(), context.getNumberOfParallelSubtasks(), context.metricGroup()));
  }
}
