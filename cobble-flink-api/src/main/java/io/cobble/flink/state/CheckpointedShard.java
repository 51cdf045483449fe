package io.cobble.flink.state;

import io.cobble.Config;
import io.cobble.reader.ReadOnlyDb;
import io.cobble.snapshot.ShardSnapshot;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

/**
 * One Cobble shard as a completed checkpoint records it: Flink's keyed state handle of one subtask
 * and the Cobble meta file it carries (the inspect schema and the shard manifest). The public face
 * of the backend's snapshot format for tools outside this package (the checkpoint reader): they
 * recognise Cobble handles and stage them into read-only engine views through it, never through the
 * package's internals.
 */
public final class CheckpointedShard {

  private final IncrementalRemoteKeyedStateHandle handle;
  private final SnapshotMeta meta;

  private CheckpointedShard(IncrementalRemoteKeyedStateHandle handle, SnapshotMeta meta) {
    this.handle = handle;
    this.meta = meta;
  }

  /**
   * Reads the meta file of {@code handle}; returns null when the handle was not written by Cobble
   * (another backend's incremental checkpoint). A damaged Cobble meta file is an error.
   */
  public static CheckpointedShard read(IncrementalRemoteKeyedStateHandle handle, ClassLoader loader)
      throws IOException {
    byte[] meta = metaBytes(handle);
    return meta == null ? null : parse(handle, meta, String.valueOf(metaHandleOf(handle)), loader);
  }

  /**
   * The shard of a sidecar: its files by local name and the bytes of its Cobble meta file, as
   * {@link #metaBytes} returned them when the sidecar was written.
   */
  public static CheckpointedShard of(
      KeyGroupRange range,
      long checkpointId,
      List<HandleAndLocalPath> files,
      byte[] meta,
      String source,
      ClassLoader loader)
      throws IOException {
    IncrementalRemoteKeyedStateHandle handle =
        new IncrementalRemoteKeyedStateHandle(
            new UUID(0, 0),
            range,
            checkpointId,
            files,
            Collections.emptyList(),
            new ByteStreamStateHandle(source, meta),
            meta.length);
    return parse(handle, meta, source, loader);
  }

  private static CheckpointedShard parse(
      IncrementalRemoteKeyedStateHandle handle, byte[] meta, String source, ClassLoader loader)
      throws IOException {
    return new CheckpointedShard(
        handle, SnapshotMeta.read(new ByteArrayInputStream(meta), loader, source));
  }

  /**
   * The bytes of {@code handle}'s Cobble meta file, or null when the handle was not written by
   * Cobble. Only the magic is checked: reading the schema would need the job's classes.
   */
  public static byte[] metaBytes(IncrementalRemoteKeyedStateHandle handle) throws IOException {
    StreamStateHandle metaHandle = metaHandleOf(handle);
    byte[] bytes;
    try (InputStream in = metaHandle.openInputStream()) {
      bytes = in.readAllBytes();
    }
    if (bytes.length < 4
        || ((bytes[0] & 0xff) << 24
                | (bytes[1] & 0xff) << 16
                | (bytes[2] & 0xff) << 8
                | (bytes[3] & 0xff))
            != SnapshotMeta.MAGIC) {
      return null;
    }
    return bytes;
  }

  /** The files of the shard by the local names its manifest lists them under. */
  public List<HandleAndLocalPath> files() {
    return handle.getSharedState();
  }

  public KeyGroupRange keyGroupRange() {
    return handle.getKeyGroupRange();
  }

  public long checkpointId() {
    return handle.getCheckpointId();
  }

  public TypeSerializerSnapshot<?> keySerializerSnapshot() {
    return meta.proxy.getKeySerializerSnapshot();
  }

  /** The states (and timer queues) the shard holds, with their serializers as recorded. */
  public List<StateMetaInfoSnapshot> states() {
    return meta.stateMetaInfos();
  }

  /**
   * Stages the files of {@code shards} under {@code dir} (hard links when they lie on a local file
   * system, copies otherwise; the checkpoint itself is never written) and opens each read-only. The
   * returned engines read from {@code dir}, which must outlive them.
   */
  public static List<ReadOnlyDb> stage(List<CheckpointedShard> shards, Path dir)
      throws IOException {
    StagedVolume volume = StagedVolume.create(dir);
    List<ReadOnlyDb> opened = new ArrayList<>();
    try (CloseableRegistry cancel = new CloseableRegistry()) {
      for (CheckpointedShard s : shards) {
        ShardSnapshot staged = volume.add(s.handle, s.meta.shard, cancel);
        opened.add(
            ReadOnlyDb.open(
                volume.storage(), staged.shardId(), staged.id(), Config.builder().build()));
      }
      return opened;
    } catch (IOException | RuntimeException e) {
      for (ReadOnlyDb db : opened) {
        db.close();
      }
      throw e;
    }
  }

  /** The engine column family a keyed state's rows live in. */
  public static String stateFamily(String stateName) {
    return CobbleKeyedStateCore.stateFamily(stateName);
  }

  /**
   * The meta handle's accessor was renamed in Flink 1.19 ({@code getMetaStateHandle} before): this
   * library is linked against whichever Flink runs it, so it looks the accessor up once.
   */
  private static StreamStateHandle metaHandleOf(IncrementalRemoteKeyedStateHandle handle)
      throws IOException {
    try {
      return (StreamStateHandle) MetaAccessor.METHOD.invoke(handle);
    } catch (IllegalAccessException e) {
      throw new IOException("cannot read the meta handle of " + handle, e);
    } catch (InvocationTargetException e) {
      throw new IOException("cannot read the meta handle of " + handle, e.getCause());
    }
  }

  private static final class MetaAccessor {
    static final Method METHOD = find();

    private static Method find() {
      for (String name : new String[] {"getMetaDataStateHandle", "getMetaStateHandle"}) {
        try {
          return IncrementalRemoteKeyedStateHandle.class.getMethod(name);
        } catch (NoSuchMethodException e) {
          // The other Flink line's name.
        }
      }
      throw new IllegalStateException(
          "IncrementalRemoteKeyedStateHandle has neither getMetaDataStateHandle nor"
              + " getMetaStateHandle: unsupported Flink version");
    }
  }
}
