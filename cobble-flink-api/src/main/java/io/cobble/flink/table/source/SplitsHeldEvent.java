package io.cobble.flink.table.source;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.api.connector.source.SourceEvent;

/**
 * A reader to the enumerator when it starts: the splits it holds from its restored state. Splits
 * the enumerator's checkpoint counted as in progress that no reader holds were finished before the
 * readers' part of that checkpoint, and their snapshots can be released.
 */
final class SplitsHeldEvent implements SourceEvent {

  private static final long serialVersionUID = 1L;

  private final List<String> splitIds;

  SplitsHeldEvent(List<String> splitIds) {
    this.splitIds = Collections.unmodifiableList(new ArrayList<>(splitIds));
  }

  List<String> splitIds() {
    return splitIds;
  }

  @Override
  public String toString() {
    return "holding " + splitIds;
  }
}
