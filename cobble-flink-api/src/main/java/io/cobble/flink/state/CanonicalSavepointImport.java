package io.cobble.flink.state;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.schema.ColumnSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot.CommonOptionsKeys;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot.CommonSerializerKeys;
import org.apache.flink.runtime.state.restore.FullSnapshotRestoreOperation;
import org.apache.flink.runtime.state.restore.KeyGroup;
import org.apache.flink.runtime.state.restore.KeyGroupEntry;
import org.apache.flink.runtime.state.restore.SavepointRestoreResult;
import org.apache.flink.runtime.state.restore.ThrowingIterator;
import org.apache.flink.util.StateMigrationException;

/**
 * Builds a fresh shard from canonical savepoint handles (written by Cobble, RocksDB or the heap
 * backend): the metadata is checked first ({@link SavepointPreflight}), then the rows of the key
 * groups of the backend's range are translated ({@link CanonicalRows}) and written. The shard's
 * directory carries an {@link #IMPORTING} marker until the import completed; an interrupted import
 * is never opened as a database, and the next attempt deletes whatever it left.
 */
public final class CanonicalSavepointImport {

  /** Present in a shard directory while an import writes into it. */
  public static final String IMPORTING = "IMPORTING";

  private CanonicalSavepointImport() {}

  /** The imported shard and what the backend needs to serve it. */
  static final class Imported {
    final Db db;
    final TypeSerializer<?> keySerializer;
    final List<StateMetaInfoSnapshot> states;

    Imported(Db db, TypeSerializer<?> keySerializer, List<StateMetaInfoSnapshot> states) {
      this.db = db;
      this.keySerializer = keySerializer;
      this.states = states;
    }
  }

  /**
   * The canonical savepoint handles among a backend's restore handles; empty for a Cobble
   * checkpoint. A mix of both is rejected: no Flink restore produces one.
   */
  static List<KeyGroupsStateHandle> canonicalHandles(Collection<KeyedStateHandle> handles) {
    List<KeyGroupsStateHandle> canonical = new ArrayList<>();
    int others = 0;
    for (KeyedStateHandle h : handles) {
      if (h instanceof KeyGroupsStateHandle) {
        canonical.add((KeyGroupsStateHandle) h);
      } else if (h != null) {
        others++;
      }
    }
    if (!canonical.isEmpty() && others > 0) {
      throw new IllegalStateException(
          "Cannot restore a mix of canonical savepoint handles and "
              + others
              + " other handle(s); restore from one savepoint or checkpoint");
    }
    return canonical;
  }

  /** Imports the spec's canonical handles into a new shard in the spec's working directory. */
  static CobbleRestore.Result restore(
      CobbleBackendSpec<?> spec, List<KeyGroupsStateHandle> handles, Config baseConfig)
      throws Exception {
    Imported imported =
        importShard(
            handles,
            spec.keySerializer,
            spec.keyGroupRange,
            spec.numberOfKeyGroups,
            spec.settings.timerService(),
            spec.workDir.resolve(CobbleRestore.DB_DIR),
            CobbleRestore.shardConfig(baseConfig, spec.numberOfKeyGroups, spec.keyGroupRange),
            spec.classLoader,
            spec.cancelStreamRegistry);
    CobbleRestore.Result result =
        new CobbleRestore.Result(imported.db, imported.states, -1, new java.util.HashMap<>());
    result.keySerializer = imported.keySerializer;
    return result;
  }

  /** Whether {@code dbDir} holds an import that did not finish. */
  public static boolean isIncomplete(Path dbDir) {
    return Files.exists(dbDir.resolve(IMPORTING));
  }

  static <K> Imported importShard(
      Collection<KeyGroupsStateHandle> handles,
      TypeSerializer<K> keySerializer,
      KeyGroupRange range,
      int numberOfKeyGroups,
      TimerServiceKind timerService,
      Path dbDir,
      Config config,
      ClassLoader classLoader,
      CloseableRegistry cancel)
      throws Exception {
    SavepointPreflight.Checked<K> checked =
        SavepointPreflight.check(handles, keySerializer, timerService, classLoader, cancel);
    CobbleKeyedStateCore.deleteQuietly(dbDir);
    Files.createDirectories(dbDir);
    Path marker = Files.createFile(dbDir.resolve(IMPORTING));
    Db db = Db.open(dbDir, config);
    try {
      new Writer<>(db, range, numberOfKeyGroups, checked)
          .run(new ArrayList<KeyedStateHandle>(handles), classLoader);
      db.flush();
      Files.delete(marker);
      return new Imported(db, checked.keySerializer, checked.states);
    } catch (Exception | Error e) {
      db.close();
      CobbleKeyedStateCore.deleteQuietly(dbDir);
      throw e;
    }
  }

  /** Translates and writes the rows of one import. */
  private static final class Writer<K> {
    private final Db db;
    private final KeyGroupRange range;
    private final int numberOfKeyGroups;
    private final SavepointPreflight.Checked<K> checked;
    private final CanonicalRows rows;
    private final Set<String> families = new HashSet<>();
    private final DataOutputSerializer key = new DataOutputSerializer(64);
    private final DataOutputSerializer value = new DataOutputSerializer(128);

    Writer(Db db, KeyGroupRange range, int numberOfKeyGroups, SavepointPreflight.Checked<K> c) {
      this.db = db;
      this.range = range;
      this.numberOfKeyGroups = numberOfKeyGroups;
      this.checked = c;
      this.rows = new CanonicalRows(numberOfKeyGroups);
    }

    void run(List<KeyedStateHandle> handles, ClassLoader classLoader) throws Exception {
      StateSerializerProvider<K> keys =
          StateSerializerProvider.fromNewRegisteredSerializer(checked.keySerializer);
      ThrowingIterator<SavepointRestoreResult> results =
          new FullSnapshotRestoreOperation<>(range, classLoader, handles, keys).restore();
      while (results.hasNext()) {
        SavepointRestoreResult result = results.next();
        List<Target> targets = new ArrayList<>();
        for (StateMetaInfoSnapshot s : result.getStateMetaInfoSnapshots()) {
          targets.add(target(s));
        }
        ThrowingIterator<KeyGroup> groups = result.getRestoredKeyGroups();
        while (groups.hasNext()) {
          KeyGroup group = groups.next();
          int kg = group.getKeyGroupId();
          boolean owned = range.contains(kg);
          ThrowingIterator<KeyGroupEntry> entries = group.getKeyGroupEntries();
          while (entries.hasNext()) {
            KeyGroupEntry entry = entries.next();
            if (owned) {
              write(targets, kg, entry);
            }
          }
        }
      }
    }

    private Target target(StateMetaInfoSnapshot s) {
      Target t = new Target(s, checked.restoredKeySerializer);
      if (families.add(t.family)) {
        boolean exists = db.schema().families().stream().anyMatch(f -> f.name().equals(t.family));
        if (!exists) {
          db.createFamily(
              t.family,
              Collections.singletonList(
                  t.kind.equals("LIST")
                      ? ColumnSpec.merging(CobbleKeyedStateCore.VALUE_COLUMN, "list_append")
                      : ColumnSpec.of(CobbleKeyedStateCore.VALUE_COLUMN)));
        }
      }
      return t;
    }

    private void write(List<Target> targets, int kg, KeyGroupEntry entry) throws Exception {
      int id = entry.getKvStateId();
      if (id < 0 || id >= targets.size()) {
        throw new StateMigrationException(
            "Corrupt canonical savepoint: an entry of key group "
                + kg
                + " names state id "
                + id
                + " but the savepoint has "
                + targets.size()
                + " states");
      }
      Target t = targets.get(id);
      try {
        int entryGroup = rows.keyGroupOf(entry.getKey());
        if (entryGroup != kg) {
          throw new IOException("the key belongs to key group " + entryGroup);
        }
        if (t.queue) {
          db.put(kg, t.family, rows.queueElement(entry.getKey(), t.valueSerializer), 0, EMPTY);
          return;
        }
        rows.toCobbleKey(
            entry.getKey(),
            t.keySerializer,
            t.namespaceSerializer,
            t.ambiguous,
            t.kind.equals("MAP"),
            key);
        byte[] v;
        if (t.kind.equals("LIST")) {
          v = CanonicalRows.toCobbleList(entry.getValue(), t.elementSerializer, value);
        } else {
          CanonicalRows.checkValue(entry.getValue(), t.elementSerializer, t.kind.equals("MAP"));
          v = entry.getValue();
        }
        db.put(kg, t.family, key.getCopyOfBuffer(), 0, v);
      } catch (IOException | RuntimeException e) {
        throw new StateMigrationException(
            "Corrupt canonical savepoint entry of state '"
                + t.name
                + "' in key group "
                + kg
                + " (range "
                + range
                + " of "
                + numberOfKeyGroups
                + "): "
                + e.getMessage(),
            e);
      }
    }
  }

  private static final byte[] EMPTY = new byte[0];

  /** Where and how the rows of one savepoint state are written. */
  private static final class Target {
    final String name;
    final String kind;
    final boolean queue;
    final String family;
    final TypeSerializer<?> keySerializer;
    final TypeSerializer<?> namespaceSerializer;
    final TypeSerializer<?> valueSerializer;

    /** The list element, the map value or the value itself: what one stored value holds. */
    final TypeSerializer<?> elementSerializer;

    final boolean ambiguous;

    Target(StateMetaInfoSnapshot s, TypeSerializer<?> keySerializer) {
      this.name = s.getName();
      this.queue = s.getBackendStateType() == StateMetaInfoSnapshot.BackendStateType.PRIORITY_QUEUE;
      this.kind = queue ? "TIMERS" : s.getOption(CommonOptionsKeys.KEYED_STATE_TYPE);
      this.family =
          queue ? CobbleKeyedStateCore.queueFamily(name) : CobbleKeyedStateCore.stateFamily(name);
      this.keySerializer = keySerializer.duplicate();
      this.valueSerializer =
          s.getTypeSerializerSnapshot(CommonSerializerKeys.VALUE_SERIALIZER).restoreSerializer();
      if (queue) {
        this.namespaceSerializer = null;
        this.elementSerializer = valueSerializer;
        this.ambiguous = false;
        return;
      }
      this.namespaceSerializer =
          s.getTypeSerializerSnapshot(CommonSerializerKeys.NAMESPACE_SERIALIZER)
              .restoreSerializer();
      if (kind.equals("LIST")) {
        this.elementSerializer = ((ListSerializer<?>) valueSerializer).getElementSerializer();
      } else if (kind.equals("MAP")) {
        this.elementSerializer = ((MapSerializer<?, ?>) valueSerializer).getValueSerializer();
      } else {
        this.elementSerializer = valueSerializer;
      }
      this.ambiguous =
          CompositeKeySerializationUtils.isAmbiguousKeyPossible(keySerializer, namespaceSerializer);
    }
  }
}
