package io.cobble.flink.table.source;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/** Serializes the {@link EnumeratorState} for checkpoints. */
public final class EnumeratorStateSerializer implements SimpleVersionedSerializer<EnumeratorState> {

  static final int VERSION = 1;

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
        });
  }

  @Override
  public EnumeratorState deserialize(int version, byte[] serialized) throws IOException {
    if (version != VERSION) {
      throw new IOException(
          "Cobble source enumerator state version " + version + " is not readable by this Cobble");
    }
    return StateBytes.read(
        serialized,
        "enumerator",
        in -> {
          long last = in.readLong();
          List<io.cobble.reader.ScanSplit> lastSplits = StateBytes.readScans(in);
          int count = in.readInt();
          List<CobbleSourceSplit> pending = new ArrayList<>(count);
          for (int i = 0; i < count; i++) {
            pending.add(StateBytes.readSplit(in));
          }
          return new EnumeratorState(last, lastSplits, pending);
        });
  }
}
