package io.cobble.flink.table;

import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.source.DataStreamScanProvider;
import org.apache.flink.table.data.RowData;

/**
 * Stands in for the scan of a validated Cobble source until the snapshot reader exists. The planner
 * asks every scan source for its provider while validating a query (also one that only looks the
 * table up), so the refusal waits until the scan is actually translated into a job.
 */
final class PendingScanProvider implements DataStreamScanProvider {

  private final String refusal;

  PendingScanProvider(String refusal) {
    this.refusal = refusal;
  }

  @Override
  public boolean isBounded() {
    return true;
  }

  @Override
  public DataStream<RowData> produceDataStream(
      ProviderContext providerContext, StreamExecutionEnvironment execEnv) {
    throw new ValidationException(refusal);
  }
}
