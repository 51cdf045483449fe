package io.cobble.flink.table.sink;

import io.cobble.Db;
import io.cobble.flink.shim.SinkWriterContext;
import io.cobble.flink.shim.SinkWriterFactory;
import io.cobble.flink.table.TableStorage;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.schema.ColumnSpec;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Optional;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.table.data.RowData;

/**
 * Opens the shard of a sink writer. Writer 0 publishes the table's inspect schema if the table has
 * none; every writer refuses a table whose published schema differs from its own, so two DDLs never
 * mix rows of different shapes in one table.
 */
public final class CobbleSinkWriterFactory implements SinkWriterFactory<RowData> {

  private static final long serialVersionUID = 1L;

  private final TableStorage table;
  private final TableSchemaFile schema;
  private final RowCodec codec;
  private final long writerBufferBytes;

  CobbleSinkWriterFactory(
      TableStorage table, TableSchemaFile schema, RowCodec codec, long writerBufferBytes) {
    this.table = table;
    this.schema = schema;
    this.codec = codec;
    this.writerBufferBytes = writerBufferBytes;
  }

  @Override
  public SinkWriter<RowData> createWriter(SinkWriterContext context) throws IOException {
    TableLayout layout = new TableLayout(schema.bucketCount(), schema.shardCount());
    if (context.parallelism() != layout.shardCount()) {
      throw new IllegalStateException(
          "The Cobble sink runs with "
              + context.parallelism()
              + " writers but 'sink.parallelism' is "
              + layout.shardCount()
              + "; the sink's parallelism must not be changed.");
    }
    publishOrCheckSchema(context.subtaskIndex());
    int shard = context.subtaskIndex();
    Db db = Db.open(shardDirectory(shard), ShardConfig.of(layout, shard, writerBufferBytes));
    try {
      addMissingColumns(db);
      return new CobbleSinkWriter(db, shard, layout, codec, context.metricGroup());
    } catch (RuntimeException e) {
      db.close();
      throw e;
    }
  }

  private void publishOrCheckSchema(int writer) throws IOException {
    try (Storage storage = table.open()) {
      Optional<TableSchemaFile> published = TableSchemaFile.read(storage);
      if (published.isPresent() && !published.get().equals(schema)) {
        throw new IllegalStateException(
            "The Cobble table at "
                + table.root()
                + " was written as "
                + published.get()
                + ", which differs from this sink's "
                + schema);
      }
      if (!published.isPresent() && writer == 0) {
        schema.publish(storage);
      }
    }
  }

  private Path shardDirectory(int shard) {
    // The engine writes shards through java.nio; the factory admits only file:// tables for now.
    return Paths.get(table.root()).resolve(TableLayout.shardDirectory(shard));
  }

  /** Gives the family one Cobble column per value column; a new Db starts with one. */
  private void addMissingColumns(Db db) {
    int present = db.schema().requireFamily(TableLayout.FAMILY).columnCount();
    for (int column = present; column < codec.valueColumnCount(); column++) {
      db.addColumn(TableLayout.FAMILY, ColumnSpec.of("c" + column));
    }
  }
}
