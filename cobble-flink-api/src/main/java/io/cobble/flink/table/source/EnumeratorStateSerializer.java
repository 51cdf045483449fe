package io.cobble.flink.table.source;

import io.cobble.reader.ScanSplit;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * Serializes the {@link EnumeratorState} for checkpoints. Version 2 adds the pin owner and the
 * outstanding splits; a version 1 state restores with a new pin and no outstanding splits.
 */
public final class EnumeratorStateSerializer implements SimpleVersionedSerializer<EnumeratorState> {

  static final int VERSION = 2;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(EnumeratorState state) throws IOException {
    return StateBytes.write(
        out -> {
          out.writeLong(state.lastGlobalId());
          StateBytes.writeScans(out, state.lastSplits());
          out.writeInt(state.pending().size());
          for (CobbleSourceSplit split : state.pending()) {
            StateBytes.writeSplit(out, split);
          }
          out.writeUTF(state.pinOwner());
          out.writeInt(state.outstanding().size());
          for (Map.Entry<String, Long> split : state.outstanding().entrySet()) {
            out.writeUTF(split.getKey());
            out.writeLong(split.getValue());
          }
          out.writeInt(state.bases().size());
          for (Map.Entry<Long, Long> base : state.bases().entrySet()) {
            out.writeLong(base.getKey());
            out.writeLong(base.getValue());
          }
        });
  }

  @Override
  public EnumeratorState deserialize(int version, byte[] serialized) throws IOException {
    if (version != VERSION && version != 1) {
      throw new IOException(
          "Cobble source enumerator state version " + version + " is not readable by this Cobble");
    }
    return StateBytes.read(serialized, "enumerator", in -> read(version, in));
  }

  private static EnumeratorState read(int version, DataInputStream in) throws IOException {
    long last = in.readLong();
    List<ScanSplit> lastSplits = StateBytes.readScans(in);
    int count = in.readInt();
    List<CobbleSourceSplit> pending = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      pending.add(StateBytes.readSplit(in));
    }
    if (version == 1) {
      return new EnumeratorState(
          last,
          lastSplits,
          pending,
          EnumeratorState.newPinOwner(),
          Collections.emptyMap(),
          Collections.emptyMap());
    }
    String owner = in.readUTF();
    int splits = in.readInt();
    Map<String, Long> outstanding = new HashMap<>();
    for (int i = 0; i < splits; i++) {
      outstanding.put(in.readUTF(), in.readLong());
    }
    int bases = in.readInt();
    Map<Long, Long> baseOf = new HashMap<>();
    for (int i = 0; i < bases; i++) {
      baseOf.put(in.readLong(), in.readLong());
    }
    return new EnumeratorState(last, lastSplits, pending, owner, outstanding, baseOf);
  }
}
