package io.cobble.flink.table.source;

import io.cobble.Row;
import java.util.Iterator;

/** The rows a reader emits from one split, with the bucket of the row returned last. */
interface SplitRows extends Iterator<Row>, AutoCloseable {

  /** Bucket of the row {@link #next()} returned last. */
  int bucket();

  @Override
  void close();
}
