package io.cobble.flink.state;

import io.cobble.snapshot.ShardSnapshot;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.zip.CRC32;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.IOUtils;

/**
 * The meta file of a Cobble checkpoint: Flink's {@link KeyedBackendSerializationProxy} (the key
 * serializer and, per state, its kind and the namespace and value serializer snapshots: the inspect
 * schema a state reader decodes rows with) followed by Cobble's shard manifest, whose files are
 * named by the local names Flink's handle lists them under. Layout: magic, format version, payload
 * length, payload, CRC32 of the payload.
 */
final class SnapshotMeta {

  static final int MAGIC = 0x43424b53; // "CBKS"
  static final int FORMAT = 1;

  final KeyedBackendSerializationProxy<?> proxy;
  final ShardSnapshot shard;

  private SnapshotMeta(KeyedBackendSerializationProxy<?> proxy, ShardSnapshot shard) {
    this.proxy = proxy;
    this.shard = shard;
  }

  List<StateMetaInfoSnapshot> stateMetaInfos() {
    return proxy.getStateMetaInfoSnapshots();
  }

  static <K> byte[] encode(
      TypeSerializer<K> keySerializer, List<StateMetaInfoSnapshot> states, ShardSnapshot shard)
      throws IOException {
    DataOutputSerializer payload = new DataOutputSerializer(1024);
    new KeyedBackendSerializationProxy<>(keySerializer, states, false).write(payload);
    byte[] manifest = shard.encode();
    payload.writeInt(manifest.length);
    payload.write(manifest);
    DataOutputSerializer out = new DataOutputSerializer(payload.length() + 20);
    out.writeInt(MAGIC);
    out.writeInt(FORMAT);
    out.writeInt(payload.length());
    out.write(payload.getSharedBuffer(), 0, payload.length());
    CRC32 crc = new CRC32();
    crc.update(payload.getSharedBuffer(), 0, payload.length());
    out.writeLong(crc.getValue());
    return out.getCopyOfBuffer();
  }

  static SnapshotMeta read(InputStream stream, ClassLoader classLoader, String source)
      throws IOException {
    DataInputViewStreamWrapper in = new DataInputViewStreamWrapper(stream);
    int magic = in.readInt();
    if (magic != MAGIC) {
      throw new IOException(
          source
              + " is not a Cobble state backend snapshot (magic "
              + Integer.toHexString(magic)
              + ")");
    }
    int format = in.readInt();
    if (format != FORMAT) {
      throw new IOException(
          source + " has Cobble snapshot format " + format + "; this Cobble reads " + FORMAT);
    }
    int length = in.readInt();
    if (length < 0) {
      throw new IOException(source + " is damaged: negative length");
    }
    byte[] payload = new byte[length];
    IOUtils.readFully(stream, payload, 0, length);
    long expected = in.readLong();
    CRC32 crc = new CRC32();
    crc.update(payload, 0, length);
    if (crc.getValue() != expected) {
      throw new IOException(source + " is damaged: checksum mismatch");
    }
    DataInputDeserializer view = new DataInputDeserializer(payload);
    KeyedBackendSerializationProxy<?> proxy = new KeyedBackendSerializationProxy<>(classLoader);
    proxy.read(view);
    byte[] manifest = new byte[view.readInt()];
    view.readFully(manifest);
    return new SnapshotMeta(proxy, ShardSnapshot.decode(manifest));
  }
}
