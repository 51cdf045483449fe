package io.cobble.flink.state;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot.CommonOptionsKeys;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot.CommonSerializerKeys;
import org.apache.flink.util.IOUtils;
import org.apache.flink.util.StateMigrationException;

/**
 * Checks a canonical savepoint's metadata before a single row is written: every state is a keyed
 * kind Cobble imports, every serializer snapshot can be restored, and the key serializer is
 * compatible as is. Serializers of states are compared with the job's when the job registers them
 * ({@link #requireAsIs}): a canonical import never migrates, since its rows were written by another
 * backend's serializers and rewriting them would hide a real incompatibility.
 */
final class SavepointPreflight {

  /** Keyed state kinds a canonical savepoint may hold that Cobble imports. */
  private static final List<String> IMPORTED_KINDS =
      java.util.Arrays.asList("VALUE", "LIST", "MAP", "REDUCING", "AGGREGATING");

  private SavepointPreflight() {}

  /** The checked metadata of the canonical handles: the key serializer to use and the states. */
  static final class Checked<K> {
    final TypeSerializer<K> keySerializer;
    final TypeSerializer<K> restoredKeySerializer;
    final List<StateMetaInfoSnapshot> states;

    Checked(
        TypeSerializer<K> keySerializer,
        TypeSerializer<K> restoredKeySerializer,
        List<StateMetaInfoSnapshot> states) {
      this.keySerializer = keySerializer;
      this.restoredKeySerializer = restoredKeySerializer;
      this.states = states;
    }
  }

  static <K> Checked<K> check(
      Collection<KeyGroupsStateHandle> handles,
      TypeSerializer<K> keySerializer,
      TimerServiceKind timerService,
      ClassLoader classLoader,
      CloseableRegistry cancel)
      throws IOException, StateMigrationException {
    Map<String, StateMetaInfoSnapshot> states = new LinkedHashMap<>();
    TypeSerializer<K> current = keySerializer;
    TypeSerializer<K> restored = null;
    for (KeyGroupsStateHandle h : handles) {
      KeyedBackendSerializationProxy<K> proxy = readProxy(h, classLoader, cancel);
      TypeSerializerSnapshot<K> previous = proxy.getKeySerializerSnapshot();
      StateSerializerProvider<K> provider =
          StateSerializerProvider.fromNewRegisteredSerializer(keySerializer);
      TypeSerializerSchemaCompatibility<K> compat =
          provider.setPreviousSerializerSnapshotForRestoredState(previous);
      requireAsIs(
          "(all states)",
          "key serializer",
          compat,
          previous,
          keySerializer,
          "the savepoint's keys");
      current = provider.currentSchemaSerializer();
      restored = restoreSerializer(previous, "(all states)", "key serializer");
      for (StateMetaInfoSnapshot s : proxy.getStateMetaInfoSnapshots()) {
        checkState(s, timerService);
        states.putIfAbsent(s.getName(), s);
      }
    }
    return new Checked<>(current, restored, new ArrayList<>(states.values()));
  }

  private static void checkState(StateMetaInfoSnapshot s, TimerServiceKind timerService)
      throws StateMigrationException {
    switch (s.getBackendStateType()) {
      case KEY_VALUE:
        String kind = s.getOption(CommonOptionsKeys.KEYED_STATE_TYPE);
        if (!IMPORTED_KINDS.contains(kind)) {
          throw new StateMigrationException(
              "Cannot restore state '"
                  + s.getName()
                  + "' from the canonical savepoint: its kind "
                  + kind
                  + " is not supported by the Cobble state backend (supported: value, list, map,"
                  + " reducing and aggregating state)");
        }
        restoreSerializer(s, CommonSerializerKeys.NAMESPACE_SERIALIZER, "namespace serializer");
        restoreSerializer(s, CommonSerializerKeys.VALUE_SERIALIZER, "value serializer");
        return;
      case PRIORITY_QUEUE:
        if (timerService == TimerServiceKind.HEAP) {
          throw new StateMigrationException(
              "Cannot restore timers '"
                  + s.getName()
                  + "' from the canonical savepoint with heap timers; set '"
                  + CobbleStateBackendOptions.TIMER_SERVICE.key()
                  + "' to COBBLE for the restore");
        }
        restoreSerializer(s, CommonSerializerKeys.VALUE_SERIALIZER, "timer element serializer");
        return;
      default:
        // Operator and broadcast state live in the operator state backend and never reach a keyed
        // backend's handles; one found here is a savepoint Cobble cannot interpret.
        throw new StateMigrationException(
            "Cannot restore state '"
                + s.getName()
                + "' from the canonical savepoint: it is "
                + s.getBackendStateType()
                + " state, not keyed state, and the Cobble keyed state backend does not import it");
    }
  }

  private static TypeSerializer<?> restoreSerializer(
      StateMetaInfoSnapshot s, CommonSerializerKeys key, String role)
      throws StateMigrationException {
    TypeSerializerSnapshot<?> snapshot = s.getTypeSerializerSnapshot(key);
    if (snapshot == null) {
      throw new StateMigrationException(
          "Cannot restore state '" + s.getName() + "': the savepoint has no " + role);
    }
    return restoreSerializer(snapshot, s.getName(), role);
  }

  private static <T> TypeSerializer<T> restoreSerializer(
      TypeSerializerSnapshot<T> snapshot, String state, String role)
      throws StateMigrationException {
    try {
      return snapshot.restoreSerializer();
    } catch (RuntimeException | LinkageError e) {
      throw new StateMigrationException(
          "Cannot restore state '"
              + state
              + "': its "
              + role
              + " ("
              + snapshot.getClass().getName()
              + ") cannot be restored: "
              + e,
          e);
    }
  }

  /**
   * Rejects a serializer of a canonically restored state that is not compatible as is: migration,
   * reconfiguration and incompatibility alike name the state, the role and both serializers.
   */
  static void requireAsIs(
      String state,
      String role,
      TypeSerializerSchemaCompatibility<?> compat,
      TypeSerializerSnapshot<?> canonical,
      TypeSerializer<?> runtime,
      String where)
      throws StateMigrationException {
    if (compat.isCompatibleAsIs()) {
      return;
    }
    String verdict =
        compat.isCompatibleAfterMigration()
            ? "requires migration"
            : compat.isCompatibleWithReconfiguredSerializer()
                ? "requires a reconfigured serializer"
                : "is incompatible";
    throw new StateMigrationException(
        "Cannot restore state '"
            + state
            + "' from the canonical savepoint: the "
            + role
            + " of "
            + where
            + " "
            + verdict
            + " (canonical: "
            + canonical.getClass().getName()
            + ", runtime: "
            + runtime.getClass().getName()
            + "); Cobble accepts canonical state only with serializers compatible as is");
  }

  private static <K> KeyedBackendSerializationProxy<K> readProxy(
      KeyGroupsStateHandle handle, ClassLoader classLoader, CloseableRegistry cancel)
      throws IOException {
    FSDataInputStream in = handle.openInputStream();
    cancel.registerCloseable(in);
    try {
      KeyedBackendSerializationProxy<K> proxy = new KeyedBackendSerializationProxy<>(classLoader);
      proxy.read(new DataInputViewStreamWrapper(in));
      return proxy;
    } finally {
      if (cancel.unregisterCloseable(in)) {
        IOUtils.closeQuietly(in);
      }
    }
  }
}
