package io.cobble.flink.state;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.runtime.state.StreamStateHandle;

/**
 * The engine files this backend handed to Flink, by file identity. Only files of the last
 * checkpoint Flink confirmed (or of the checkpoint restored from) are referenced again, as
 * placeholders: a file of a checkpoint that may still fail could be deleted by that failure
 * (FLINK-25395). Once handed over, Flink owns a file; Cobble never deletes it.
 */
final class CheckpointFiles {

  private final TreeMap<Long, Map<String, StreamStateHandle>> pending = new TreeMap<>();
  private Map<String, StreamStateHandle> confirmed = Collections.emptyMap();
  private long confirmedId = Long.MIN_VALUE;

  static String identity(String name, long size) {
    return name + "/" + size;
  }

  synchronized Map<String, StreamStateHandle> confirmed() {
    return confirmed;
  }

  synchronized void pending(long checkpointId, Map<String, StreamStateHandle> files) {
    pending.put(checkpointId, new HashMap<>(files));
  }

  synchronized void completed(long checkpointId) {
    Map<String, StreamStateHandle> files = pending.get(checkpointId);
    if (files != null && checkpointId >= confirmedId) {
      confirmed = files;
      confirmedId = checkpointId;
    }
    pending.headMap(checkpointId, true).clear();
  }

  synchronized void aborted(long checkpointId) {
    pending.remove(checkpointId);
  }

  synchronized void restored(long checkpointId, Map<String, StreamStateHandle> files) {
    confirmed = new HashMap<>(files);
    confirmedId = checkpointId;
  }
}
