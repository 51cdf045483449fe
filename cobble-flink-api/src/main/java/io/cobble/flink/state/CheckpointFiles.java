package io.cobble.flink.state;

import java.util.ArrayList;
import java.util.Collection;
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
  // Engine file numbers each pending checkpoint refers to (empty for savepoints).
  private final TreeMap<Long, Collection<Long>> pendingNumbers = new TreeMap<>();
  private Map<String, StreamStateHandle> confirmed = Collections.emptyMap();
  private long confirmedId = Long.MIN_VALUE;

  static String identity(String name, long size) {
    return name + "/" + size;
  }

  synchronized Map<String, StreamStateHandle> confirmed() {
    return confirmed;
  }

  /**
   * Records what checkpoint {@code checkpointId} handed over: {@code files} by identity, and the
   * engine numbers of the files a checkpoint that shares files refers to ({@code numbers}).
   */
  synchronized void pending(
      long checkpointId, Map<String, StreamStateHandle> files, Collection<Long> numbers) {
    pending.put(checkpointId, new HashMap<>(files));
    pendingNumbers.put(checkpointId, new ArrayList<>(numbers));
  }

  /**
   * Flink confirmed {@code checkpointId}; returns the engine numbers of the files it refers to,
   * which Flink now keeps for the shard (empty when it is unknown or older than the last one).
   */
  synchronized Collection<Long> completed(long checkpointId) {
    Map<String, StreamStateHandle> files = pending.get(checkpointId);
    Collection<Long> numbers = pendingNumbers.get(checkpointId);
    Collection<Long> owned = Collections.emptyList();
    if (files != null && checkpointId >= confirmedId) {
      confirmed = files;
      confirmedId = checkpointId;
      owned = numbers;
    }
    pending.headMap(checkpointId, true).clear();
    pendingNumbers.headMap(checkpointId, true).clear();
    return owned;
  }

  synchronized void aborted(long checkpointId) {
    pending.remove(checkpointId);
    pendingNumbers.remove(checkpointId);
  }

  synchronized void restored(long checkpointId, Map<String, StreamStateHandle> files) {
    confirmed = new HashMap<>(files);
    confirmedId = checkpointId;
  }
}
