package io.cobble.flink.table.source;

import org.apache.flink.api.connector.source.SourceEvent;

/**
 * A reader to the enumerator: it has emitted every row of a split, so the snapshots the split reads
 * may be released once a checkpoint taken after this event completes.
 */
final class SplitFinishedEvent implements SourceEvent {

  private static final long serialVersionUID = 1L;

  private final String splitId;

  SplitFinishedEvent(String splitId) {
    this.splitId = splitId;
  }

  String splitId() {
    return splitId;
  }

  @Override
  public String toString() {
    return "finished " + splitId;
  }
}
