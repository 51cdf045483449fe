package io.cobble.flink.v1_17;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;

/** A Sink V2 sink that drops its input, on 1.17 and 1.18 where writers come from InitContext. */
final class DiscardingSink117<T> implements Sink<T> {

  private static final long serialVersionUID = 1L;

  @Override
  public SinkWriter<T> createWriter(InitContext context) {
    return new SinkWriter<T>() {
      @Override
      public void write(T element, Context context) {}

      @Override
      public void flush(boolean endOfInput) {}

      @Override
      public void close() {}
    };
  }
}
