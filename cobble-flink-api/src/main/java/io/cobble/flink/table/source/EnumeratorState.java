package io.cobble.flink.table.source;

import io.cobble.reader.ScanSplit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What the enumerator checkpoints: the newest global snapshot it has cut into splits (0 before the
 * first), that snapshot's scan splits (the base the next change splits are diffed against), the
 * splits not yet handed to a reader, the owner name of its pin on the table root, and the splits
 * readers may still read (split id to global snapshot, and each such snapshot's diff base), which
 * the pin keeps. Splits a reader holds are in that reader's state.
 */
public final class EnumeratorState {

  private final long lastGlobalId;
  private final List<ScanSplit> lastSplits;
  private final List<CobbleSourceSplit> pending;
  private final String pinOwner;
  private final Map<String, Long> outstanding;
  private final Map<Long, Long> bases;

  EnumeratorState(
      long lastGlobalId,
      List<ScanSplit> lastSplits,
      List<CobbleSourceSplit> pending,
      String pinOwner,
      Map<String, Long> outstanding,
      Map<Long, Long> bases) {
    this.lastGlobalId = lastGlobalId;
    this.lastSplits = Collections.unmodifiableList(new ArrayList<>(lastSplits));
    this.pending = Collections.unmodifiableList(new ArrayList<>(pending));
    this.pinOwner = pinOwner;
    this.outstanding = Collections.unmodifiableMap(new HashMap<>(outstanding));
    this.bases = Collections.unmodifiableMap(new HashMap<>(bases));
  }

  static EnumeratorState initial() {
    return new EnumeratorState(
        0,
        Collections.emptyList(),
        Collections.emptyList(),
        newPinOwner(),
        Collections.emptyMap(),
        Collections.emptyMap());
  }

  /** A pin owner name no other source uses. */
  static String newPinOwner() {
    return "source-" + UUID.randomUUID();
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

  public String pinOwner() {
    return pinOwner;
  }

  public Map<String, Long> outstanding() {
    return outstanding;
  }

  public Map<Long, Long> bases() {
    return bases;
  }
}
