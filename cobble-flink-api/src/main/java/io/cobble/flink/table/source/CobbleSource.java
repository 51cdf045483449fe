package io.cobble.flink.table.source;

import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.table.data.RowData;

/**
 * The FLIP-27 source of a Cobble table: bounded over one global snapshot in batch mode, unbounded
 * and following {@code global/CURRENT} in streaming mode. Rows are INSERTs of the DDL's columns.
 */
public final class CobbleSource implements Source<RowData, CobbleSourceSplit, EnumeratorState> {

  private static final long serialVersionUID = 1L;

  private final SourceSettings settings;
  private final RowDecoder decoder;

  public CobbleSource(SourceSettings settings, RowDecoder decoder) {
    this.settings = settings;
    this.decoder = decoder;
  }

  @Override
  public Boundedness getBoundedness() {
    return settings.streaming() ? Boundedness.CONTINUOUS_UNBOUNDED : Boundedness.BOUNDED;
  }

  @Override
  public SourceReader<RowData, CobbleSourceSplit> createReader(SourceReaderContext context) {
    return new CobbleSourceReader(
        settings, decoder, context.metricGroup(), context::sendSourceEventToCoordinator);
  }

  @Override
  public SplitEnumerator<CobbleSourceSplit, EnumeratorState> createEnumerator(
      SplitEnumeratorContext<CobbleSourceSplit> context) {
    return new CobbleSplitEnumerator(context, settings, EnumeratorState.initial());
  }

  @Override
  public SplitEnumerator<CobbleSourceSplit, EnumeratorState> restoreEnumerator(
      SplitEnumeratorContext<CobbleSourceSplit> context, EnumeratorState checkpoint) {
    return new CobbleSplitEnumerator(context, settings, checkpoint);
  }

  @Override
  public SimpleVersionedSerializer<CobbleSourceSplit> getSplitSerializer() {
    return new CobbleSourceSplitSerializer();
  }

  @Override
  public SimpleVersionedSerializer<EnumeratorState> getEnumeratorCheckpointSerializer() {
    return new EnumeratorStateSerializer();
  }
}
