package io.cobble.flink.table.source;

import java.io.IOException;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/** Serializes {@link CobbleSourceSplit}s for checkpoints and for the enumerator-to-reader RPC. */
public final class CobbleSourceSplitSerializer
    implements SimpleVersionedSerializer<CobbleSourceSplit> {

  static final int VERSION = 1;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(CobbleSourceSplit split) throws IOException {
    return StateBytes.write(out -> StateBytes.writeSplit(out, split));
  }

  @Override
  public CobbleSourceSplit deserialize(int version, byte[] serialized) throws IOException {
    if (version != VERSION) {
      throw new IOException(
          "Cobble source split version " + version + " is not readable by this Cobble");
    }
    return StateBytes.read(serialized, "split", StateBytes::readSplit);
  }
}
