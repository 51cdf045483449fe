package io.cobble.flink.shim;

import java.io.IOException;
import java.io.Serializable;
import org.apache.flink.api.connector.sink2.SinkWriter;

/**
 * Creates the version-neutral writer of a Sink V2 sink. The per-line {@code Sink} classes only
 * translate Flink's init context (whose type and accessors differ between lines) into a {@link
 * SinkWriterContext} and call this.
 */
public interface SinkWriterFactory<T> extends Serializable {

  SinkWriter<T> createWriter(SinkWriterContext context) throws IOException;
}
