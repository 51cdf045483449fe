package io.cobble.flink.state.inspect;

import io.cobble.flink.state.CheckpointedShard;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

/** One operator of a checkpoint whose keyed state the Cobble backend wrote. */
public final class CobbleOperator {

  /** One parallel subtask's shard: its index and the key groups it held. */
  public static final class Subtask {
    private final int index;
    private final CheckpointedShard shard;

    Subtask(int index, CheckpointedShard shard) {
      this.index = index;
      this.shard = shard;
    }

    public int index() {
      return index;
    }

    public KeyGroupRange keyGroups() {
      return shard.keyGroupRange();
    }

    CheckpointedShard shard() {
      return shard;
    }
  }

  private final String operatorId;
  private final int parallelism;
  private final int maxParallelism;
  private final List<Subtask> subtasks;
  private final List<CobbleStateInfo> states;

  CobbleOperator(String operatorId, int parallelism, int maxParallelism, List<Subtask> subtasks) {
    this.operatorId = operatorId;
    this.parallelism = parallelism;
    this.maxParallelism = maxParallelism;
    List<Subtask> sorted = new ArrayList<>(subtasks);
    sorted.sort(Comparator.comparingInt(Subtask::index));
    this.subtasks = Collections.unmodifiableList(sorted);
    Map<String, CobbleStateInfo> byName = new LinkedHashMap<>();
    for (Subtask s : sorted) {
      for (StateMetaInfoSnapshot meta : s.shard.states()) {
        byName.putIfAbsent(meta.getName(), new CobbleStateInfo(meta));
      }
    }
    this.states = Collections.unmodifiableList(new ArrayList<>(byName.values()));
  }

  /** The operator id in hex, as Flink's web UI and REST API print it. */
  public String operatorId() {
    return operatorId;
  }

  public int parallelism() {
    return parallelism;
  }

  /** The number of key groups. */
  public int maxParallelism() {
    return maxParallelism;
  }

  public List<Subtask> subtasks() {
    return subtasks;
  }

  /** The states and timer queues of the operator, in the order the first subtask lists them. */
  public List<CobbleStateInfo> states() {
    return states;
  }

  /** The state named {@code name}. */
  public CobbleStateInfo state(String name) {
    for (CobbleStateInfo s : states) {
      if (s.name().equals(name)) {
        return s;
      }
    }
    List<String> known = new ArrayList<>();
    for (CobbleStateInfo s : states) {
      known.add(s.name());
    }
    throw new IllegalArgumentException(
        "operator " + operatorId + " has no state " + name + "; its states are " + known);
  }

  /** The key serializer as the job recorded it. */
  public TypeSerializerSnapshot<?> keySerializer() {
    return subtasks.get(0).shard.keySerializerSnapshot();
  }
}
