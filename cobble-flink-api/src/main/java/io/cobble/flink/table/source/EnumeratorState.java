package io.cobble.flink.table.source;

import io.cobble.reader.ScanSplit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What the enumerator checkpoints: the newest global snapshot it has cut into splits (0 before the
 * first), that snapshot's scan splits (the base the next change splits are diffed against), and the
 * splits not yet handed to a reader. Splits a reader holds are in that reader's state.
 */
public final class EnumeratorState {

  private final long lastGlobalId;
  private final List<ScanSplit> lastSplits;
  private final List<CobbleSourceSplit> pending;

  EnumeratorState(long lastGlobalId, List<ScanSplit> lastSplits, List<CobbleSourceSplit> pending) {
    this.lastGlobalId = lastGlobalId;
    this.lastSplits = Collections.unmodifiableList(new ArrayList<>(lastSplits));
    this.pending = Collections.unmodifiableList(new ArrayList<>(pending));
  }

  static EnumeratorState initial() {
    return new EnumeratorState(0, Collections.emptyList(), Collections.emptyList());
  }

  public long lastGlobalId() {
    return lastGlobalId;
  }

  public List<ScanSplit> lastSplits() {
    return lastSplits;
  }

  public List<CobbleSourceSplit> pending() {
    return pending;
  }
}
