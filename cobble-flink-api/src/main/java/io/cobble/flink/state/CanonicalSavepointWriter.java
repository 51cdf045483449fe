package io.cobble.flink.state;

import io.cobble.Db;
import io.cobble.Row;
import io.cobble.ScanCursor;
import java.io.IOException;
import java.util.Arrays;
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
 * group order, then state order, in the canonical layout ({@link CanonicalRows}).
 *
 * <p>Created in the savepoint's synchronous phase, it captures the shard there as a {@link
 * CanonicalSavepointView}; Flink writes the rows from that view in the asynchronous phase while the
 * task goes on changing state, and {@link #release()} closes the view.
 */
final class CanonicalSavepointWriter<K> implements FullSnapshotResources<K> {

  private final List<StateMetaInfoSnapshot> states;
  private final CanonicalSavepointView view;
  private boolean read;
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
    this.states = states;
    this.range = range;
    this.numberOfKeyGroups = numberOfKeyGroups;
    this.keySerializer = keySerializer;
    this.compression =
        compression == null ? UncompressedStreamCompressionDecorator.INSTANCE : compression;
    String[] families = new String[states.size()];
    for (int i = 0; i < states.size(); i++) {
      StateMetaInfoSnapshot s = states.get(i);
      families[i] =
          s.getBackendStateType() == StateMetaInfoSnapshot.BackendStateType.KEY_VALUE
              ? CobbleKeyedStateCore.stateFamily(s.getName())
              : CobbleKeyedStateCore.queueFamily(s.getName());
    }
    this.view = new CanonicalSavepointView(db, range, Arrays.asList(families));
  }

  @Override
  public List<StateMetaInfoSnapshot> getMetaInfoSnapshots() {
    return states;
  }

  @Override
  public KeyValueStateIterator createKVStateIterator() throws IOException {
    if (read) {
      throw new IllegalStateException("a savepoint's rows are read once");
    }
    read = true;
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
  public void release() {
    view.close();
  }

  /** Rows of every state, key group by key group; positioned on the first row when created. */
  private final class RowIterator implements KeyValueStateIterator {
    private final CanonicalRows rows = new CanonicalRows(numberOfKeyGroups);
    private final DataOutputSerializer keyOut = new DataOutputSerializer(64);
    private final DataOutputSerializer valueOut = new DataOutputSerializer(128);
    private final boolean[] ambiguous = new boolean[states.size()];
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
        if (s.getBackendStateType() == StateMetaInfoSnapshot.BackendStateType.KEY_VALUE) {
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
        cursor = view.take(keyGroup, state);
      }
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
