package io.cobble.flink.state;

import io.cobble.Db;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import java.io.IOException;
import java.util.List;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.FullSnapshotResources;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyValueStateIterator;
import org.apache.flink.runtime.state.StreamCompressionDecorator;
import org.apache.flink.runtime.state.UncompressedStreamCompressionDecorator;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot.CommonOptionsKeys;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot.CommonSerializerKeys;

/**
 * The resources Flink's canonical savepoint writer ({@code FullSnapshotAsyncWriter}) reads from a
 * Cobble shard: the meta data of every state and timer queue, and an iterator over all rows in key
 * group order, then state order, in the canonical layout ({@link CanonicalRows}). The shard has no
 * point-in-time reads, so the savepoint is written in the synchronous phase, while the task does
 * not change state.
 */
final class CanonicalSavepointWriter<K> implements FullSnapshotResources<K> {

  private final Db db;
  private final List<StateMetaInfoSnapshot> states;
  private final KeyGroupRange range;
  private final int numberOfKeyGroups;
  private final TypeSerializer<K> keySerializer;
  private final StreamCompressionDecorator compression;

  CanonicalSavepointWriter(
      Db db,
      List<StateMetaInfoSnapshot> states,
      KeyGroupRange range,
      int numberOfKeyGroups,
      TypeSerializer<K> keySerializer,
      StreamCompressionDecorator compression) {
    this.db = db;
    this.states = states;
    this.range = range;
    this.numberOfKeyGroups = numberOfKeyGroups;
    this.keySerializer = keySerializer;
    this.compression =
        compression == null ? UncompressedStreamCompressionDecorator.INSTANCE : compression;
  }

  @Override
  public List<StateMetaInfoSnapshot> getMetaInfoSnapshots() {
    return states;
  }

  @Override
  public KeyValueStateIterator createKVStateIterator() throws IOException {
    return new RowIterator();
  }

  @Override
  public KeyGroupRange getKeyGroupRange() {
    return range;
  }

  @Override
  public TypeSerializer<K> getKeySerializer() {
    return keySerializer;
  }

  @Override
  public StreamCompressionDecorator getStreamCompressionDecorator() {
    return compression;
  }

  @Override
  public void release() {}

  /** Rows of every state, key group by key group; positioned on the first row when created. */
  private final class RowIterator implements KeyValueStateIterator {
    private final CanonicalRows rows = new CanonicalRows(numberOfKeyGroups);
    private final DataOutputSerializer keyOut = new DataOutputSerializer(64);
    private final DataOutputSerializer valueOut = new DataOutputSerializer(128);
    private final boolean[] ambiguous = new boolean[states.size()];
    private final String[] families = new String[states.size()];
    private int keyGroup = range.getStartKeyGroup();
    private int state = -1;
    private ScanCursor cursor;
    private int currentGroup = -1;
    private int currentState = -1;
    private boolean newGroup;
    private boolean newState;
    private byte[] key;
    private byte[] value;

    RowIterator() throws IOException {
      for (int i = 0; i < states.size(); i++) {
        StateMetaInfoSnapshot s = states.get(i);
        boolean keyValue =
            s.getBackendStateType() == StateMetaInfoSnapshot.BackendStateType.KEY_VALUE;
        families[i] =
            keyValue
                ? CobbleKeyedStateCore.stateFamily(s.getName())
                : CobbleKeyedStateCore.queueFamily(s.getName());
        if (keyValue) {
          TypeSerializer<?> ns =
              s.getTypeSerializerSnapshot(CommonSerializerKeys.NAMESPACE_SERIALIZER)
                  .restoreSerializer();
          ambiguous[i] = CompositeKeySerializationUtils.isAmbiguousKeyPossible(keySerializer, ns);
        }
      }
      next();
    }

    @Override
    public void next() throws IOException {
      while (true) {
        if (cursor != null && cursor.hasNext()) {
          if (emit(cursor.next())) {
            return;
          }
          continue;
        }
        if (cursor != null) {
          cursor.close();
          cursor = null;
        }
        if (++state >= states.size()) {
          state = 0;
          keyGroup++;
        }
        if (keyGroup > range.getEndKeyGroup() || states.isEmpty()) {
          key = null;
          return;
        }
        if (hasFamily(families[state])) {
          cursor = db.scan(keyGroup, families[state], null, null, ScanOptions.defaults());
        }
      }
    }

    private boolean hasFamily(String family) {
      return db.schema().families().stream().anyMatch(f -> f.name().equals(family));
    }

    /** Positions on a row; false for a row with nothing stored (an emptied list). */
    private boolean emit(Row row) throws IOException {
      StateMetaInfoSnapshot s = states.get(state);
      if (s.getBackendStateType() == StateMetaInfoSnapshot.BackendStateType.PRIORITY_QUEUE) {
        rows.toCanonicalQueueKey(keyGroup, row.key(), keyOut);
        value = new byte[0];
      } else {
        rows.toCanonicalKey(keyGroup, row.key(), ambiguous[state], keyOut);
        byte[] raw = row.column(0);
        boolean list = "LIST".equals(s.getOption(CommonOptionsKeys.KEYED_STATE_TYPE));
        if (raw == null || (list && raw.length == 0)) {
          return false;
        }
        value = list ? CanonicalRows.toCanonicalList(raw, valueOut) : raw;
      }
      key = keyOut.getCopyOfBuffer();
      newGroup = keyGroup != currentGroup;
      newState = newGroup || state != currentState;
      currentGroup = keyGroup;
      currentState = state;
      return true;
    }

    @Override
    public int keyGroup() {
      return currentGroup;
    }

    @Override
    public byte[] key() {
      return key;
    }

    @Override
    public byte[] value() {
      return value;
    }

    @Override
    public int kvStateId() {
      return currentState;
    }

    @Override
    public boolean isNewKeyValueState() {
      return newState;
    }

    @Override
    public boolean isNewKeyGroup() {
      return newGroup;
    }

    @Override
    public boolean isValid() {
      return key != null;
    }

    @Override
    public void close() {
      if (cursor != null) {
        cursor.close();
        cursor = null;
      }
    }
  }
}
