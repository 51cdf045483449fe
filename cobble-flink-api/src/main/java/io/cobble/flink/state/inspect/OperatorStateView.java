package io.cobble.flink.state.inspect;

import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.flink.state.CheckpointedShard;
import io.cobble.flink.state.StateRowFormat;
import io.cobble.reader.ReadOnlyDb;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.VoidNamespace;

/**
 * A read-only view of one Cobble operator's keyed state in a checkpoint. Opening it materialises
 * the operator's checkpoint files in a private temporary directory (hard links where the checkpoint
 * lies on the local file system, copies from any Flink file system otherwise) and opens each
 * subtask's shard read-only over them; closing it removes the directory. The checkpoint itself is
 * only read.
 */
public final class OperatorStateView implements AutoCloseable {

  private final CobbleOperator operator;
  private final Path dir;
  private final List<ReadOnlyDb> shards;
  private final TypeSerializer<Object> keySerializer;

  private OperatorStateView(CobbleOperator operator, Path dir, List<ReadOnlyDb> shards) {
    this.operator = operator;
    this.dir = dir;
    this.shards = shards;
    this.keySerializer = restore(operator.keySerializer());
  }

  /** Stages {@code operator}'s files in {@code dir}, a new directory the view owns. */
  static OperatorStateView open(CobbleOperator operator, Path dir) throws IOException {
    try {
      List<CheckpointedShard> shards = new ArrayList<>();
      for (CobbleOperator.Subtask s : operator.subtasks()) {
        shards.add(s.shard());
      }
      return new OperatorStateView(
          operator, dir, CheckpointedShard.stage(shards, dir.resolve("volume")));
    } catch (IOException | RuntimeException e) {
      deleteTree(dir);
      throw e;
    }
  }

  public CobbleOperator operator() {
    return operator;
  }

  /** The value of a value, reducing or aggregating state for {@code key}, or null. */
  public <V> V value(String state, Object key) throws IOException {
    return value(state, key, VoidNamespace.INSTANCE);
  }

  /** As {@link #value(String, Object)}, in {@code namespace} (for windowed state). */
  public <V> V value(String state, Object key, Object namespace) throws IOException {
    CobbleStateInfo info = keyValueState(state, "VALUE", "REDUCING", "AGGREGATING");
    byte[] raw = read(info, key, namespace);
    return raw == null ? null : StateRowFormat.decodeValue(raw, restore(info.valueSerializer()));
  }

  /** The elements of a list state for {@code key}; empty when it has none. */
  public <E> List<E> list(String state, Object key) throws IOException {
    return list(state, key, VoidNamespace.INSTANCE);
  }

  public <E> List<E> list(String state, Object key, Object namespace) throws IOException {
    CobbleStateInfo info = keyValueState(state, "LIST");
    byte[] raw = read(info, key, namespace);
    if (raw == null) {
      return new ArrayList<>();
    }
    ListSerializer<E> ser = (ListSerializer<E>) (TypeSerializer<?>) restore(info.valueSerializer());
    return StateRowFormat.decodeList(raw, ser.getElementSerializer());
  }

  /** The entries of a map state for {@code key}, in row order; empty when it has none. */
  public <UK, UV> Map<UK, UV> map(String state, Object key) throws IOException {
    return map(state, key, VoidNamespace.INSTANCE);
  }

  public <UK, UV> Map<UK, UV> map(String state, Object key, Object namespace) throws IOException {
    CobbleStateInfo info = keyValueState(state, "MAP");
    MapSerializer<UK, UV> ser =
        (MapSerializer<UK, UV>) (TypeSerializer<?>) restore(info.valueSerializer());
    byte[] prefix = rowKey(info, key, namespace);
    Map<UK, UV> entries = new LinkedHashMap<>();
    try (ScanCursor c =
        shardOf(key)
            .scanPrefix(
                keyGroup(key),
                CheckpointedShard.stateFamily(state),
                prefix,
                ScanOptions.defaults())) {
      while (c.hasNext()) {
        Row row = c.next();
        entries.put(
            StateRowFormat.decodeMapKey(row.key(), prefix.length, ser.getKeySerializer()),
            StateRowFormat.decodeMapValue(row.column(0), ser.getValueSerializer()));
      }
    }
    return entries;
  }

  private byte[] read(CobbleStateInfo info, Object key, Object namespace) throws IOException {
    byte[][] row =
        shardOf(key)
            .get(
                keyGroup(key),
                CheckpointedShard.stateFamily(info.name()),
                rowKey(info, key, namespace));
    return row == null ? null : row[0];
  }

  private byte[] rowKey(CobbleStateInfo info, Object key, Object namespace) throws IOException {
    return StateRowFormat.rowKey(
        keySerializer, key, restore(info.namespaceSerializer()), namespace);
  }

  private int keyGroup(Object key) {
    return KeyGroupRangeAssignment.assignToKeyGroup(key, operator.maxParallelism());
  }

  private ReadOnlyDb shardOf(Object key) {
    int group = keyGroup(key);
    List<CobbleOperator.Subtask> subtasks = operator.subtasks();
    for (int i = 0; i < subtasks.size(); i++) {
      if (subtasks.get(i).keyGroups().contains(group)) {
        return shards.get(i);
      }
    }
    throw new IllegalArgumentException(
        "key "
            + key
            + " is in key group "
            + group
            + ", which no subtask of operator "
            + operator.operatorId()
            + " held in this checkpoint");
  }

  private CobbleStateInfo keyValueState(String state, String... kinds) {
    CobbleStateInfo info = operator.state(state);
    for (String kind : kinds) {
      if (kind.equals(info.kind())) {
        return info;
      }
    }
    throw new IllegalArgumentException(
        "state "
            + state
            + " of operator "
            + operator.operatorId()
            + " is a "
            + info.kind()
            + " state; this accessor reads "
            + String.join(" or ", kinds));
  }

  @SuppressWarnings("unchecked")
  private static <T> TypeSerializer<T> restore(
      org.apache.flink.api.common.typeutils.TypeSerializerSnapshot<?> snapshot) {
    return (TypeSerializer<T>) snapshot.restoreSerializer();
  }

  @Override
  public void close() {
    try {
      for (ReadOnlyDb db : shards) {
        db.close();
      }
    } finally {
      deleteTree(dir);
    }
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> files = Files.walk(root)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // Nothing of the checkpoint lies here: a leftover only holds links and copies.
    }
  }
}
