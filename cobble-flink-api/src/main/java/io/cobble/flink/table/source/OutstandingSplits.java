package io.cobble.flink.table.source;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The splits the enumerator has cut that readers may still read, and so the global snapshots the
 * source must keep pinned: each split's own snapshot and the one its changes are diffed against.
 *
 * <p>A finished split is released only when a checkpoint taken after the reader reported it
 * completes: a restore from an earlier checkpoint reads it again. Without checkpoints (none taken
 * so far) nothing is restored, so a finished split is released at once. After a restore, the
 * checkpoint may still count splits the readers had finished before their part of it; once every
 * reader has reported what it holds, those are released too.
 */
final class OutstandingSplits {

  // Split id to the global snapshot it belongs to.
  private final Map<String, Long> globalOf;
  // Global snapshot to the one its change splits diff against (0 for full splits).
  private final Map<Long, Long> baseOf;
  private final Set<String> finishedSinceCheckpoint = new HashSet<>();
  private final NavigableMap<Long, Set<String>> releasedAt = new TreeMap<>();
  // After a restore: splits no reader has reported holding yet, and who has reported.
  private final Set<String> unconfirmed;
  private final Set<Integer> reported = new HashSet<>();
  private boolean checkpointing;

  OutstandingSplits() {
    this(Collections.emptyMap(), Collections.emptyMap());
  }

  private OutstandingSplits(Map<String, Long> globalOf, Map<Long, Long> baseOf) {
    this.globalOf = new HashMap<>(globalOf);
    this.baseOf = new HashMap<>(baseOf);
    this.unconfirmed = new HashSet<>();
  }

  /**
   * The outstanding splits of a restored checkpoint; those not {@code pending} in the enumerator
   * were with readers, which report what they still hold.
   */
  static OutstandingSplits restored(
      Map<String, Long> globalOf, Map<Long, Long> baseOf, Collection<String> pending) {
    OutstandingSplits splits = new OutstandingSplits(globalOf, baseOf);
    splits.checkpointing = true;
    splits.unconfirmed.addAll(globalOf.keySet());
    splits.unconfirmed.removeAll(pending);
    return splits;
  }

  /** Splits of global snapshot {@code splits}' snapshot, diffed against global {@code base}. */
  void added(Collection<CobbleSourceSplit> splits, long base) {
    for (CobbleSourceSplit split : splits) {
      globalOf.put(split.splitId(), split.globalId());
      baseOf.put(split.globalId(), base);
    }
  }

  void finished(String splitId) {
    if (checkpointing) {
      finishedSinceCheckpoint.add(splitId);
    } else {
      release(splitId);
    }
  }

  /** Splits a reader reads again (handed back, or held after a restart): not finished after all. */
  void readAgain(Collection<String> splitIds) {
    finishedSinceCheckpoint.removeAll(splitIds);
    for (Set<String> released : releasedAt.values()) {
      released.removeAll(splitIds);
    }
  }

  /**
   * Reader {@code subtask} holds {@code splitIds} from its restored state; once all {@code
   * parallelism} readers have reported, restored splits nobody holds or waits for are released.
   */
  void held(int subtask, List<String> splitIds, int parallelism) {
    readAgain(splitIds);
    unconfirmed.removeAll(splitIds);
    reported.add(subtask);
    if (reported.size() >= parallelism) {
      for (String splitId : new ArrayList<>(unconfirmed)) {
        release(splitId);
      }
      unconfirmed.clear();
    }
  }

  /** The state to checkpoint: as if every split finished so far were released. */
  OutstandingSplits snapshot(long checkpointId) {
    checkpointing = true;
    releasedAt.put(checkpointId, new HashSet<>(finishedSinceCheckpoint));
    finishedSinceCheckpoint.clear();
    Map<String, Long> state = new HashMap<>(globalOf);
    for (Set<String> released : releasedAt.values()) {
      state.keySet().removeAll(released);
    }
    Map<Long, Long> bases = new HashMap<>();
    for (long global : state.values()) {
      bases.put(global, baseOf.get(global));
    }
    return new OutstandingSplits(state, bases);
  }

  void checkpointComplete(long checkpointId) {
    NavigableMap<Long, Set<String>> done = releasedAt.headMap(checkpointId, true);
    for (Set<String> released : done.values()) {
      for (String splitId : released) {
        release(splitId);
      }
    }
    done.clear();
  }

  private void release(String splitId) {
    Long global = globalOf.remove(splitId);
    if (global != null && !globalOf.containsValue(global)) {
      baseOf.remove(global);
    }
  }

  /** The global snapshots outstanding splits read, ascending. */
  Set<Long> globalIds() {
    Set<Long> ids = new TreeSet<>();
    for (long global : globalOf.values()) {
      ids.add(global);
      Long base = baseOf.get(global);
      if (base != null && base != 0) {
        ids.add(base);
      }
    }
    return ids;
  }

  Map<String, Long> globalOf() {
    return Collections.unmodifiableMap(globalOf);
  }

  Map<Long, Long> baseOf() {
    return Collections.unmodifiableMap(baseOf);
  }
}
