package io.cobble.flink.state.inspect;

import io.cobble.flink.state.CheckpointedShard;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

/**
 * The Cobble sidecar files of a checkpoint, kept in its {@code chk-N} directory by the HA wrapper
 * so tools find the Cobble state without decoding Flink's {@code _metadata}:
 *
 * <ul>
 *   <li>{@code _cobble-op-<operator id>} per Cobble operator: per subtask its key groups, its
 *       Cobble meta file (the inspect schema: key, namespace and value serializers of every state;
 *       and the shard manifest) and where each of its files lies;
 *   <li>{@code _cobble-checkpoint}, the global snapshot, written last: the checkpoint id and every
 *       Cobble operator of the checkpoint. A checkpoint has sidecars only when it exists.
 * </ul>
 *
 * Each file is magic, format version, payload length, payload, CRC32 of the payload.
 */
public final class CheckpointSidecars {

  static final String GLOBAL = "_cobble-checkpoint";
  static final String OPERATOR_PREFIX = "_cobble-op-";
  static final int GLOBAL_MAGIC = 0x43424b43; // "CBKC"
  static final int OPERATOR_MAGIC = 0x43424b4f; // "CBKO"
  static final int FORMAT = 1;

  private static final byte FILE = 0;
  private static final byte INLINE = 1;

  private CheckpointSidecars() {}

  /** Whether {@code checkpointDir} has sidecars. */
  public static boolean exist(Path checkpointDir) throws IOException {
    Path global = new Path(checkpointDir, GLOBAL);
    return global.getFileSystem().exists(global);
  }

  /**
   * Writes the sidecars of the checkpoint {@code checkpointId} in {@code checkpointDir} from its
   * operator states; returns the number of Cobble operators (none: nothing is written). Shared
   * files must be plain files or inline bytes (not file-merging segments).
   */
  public static int write(long checkpointId, Path checkpointDir, Collection<OperatorState> states)
      throws IOException {
    FileSystem fs = checkpointDir.getFileSystem();
    DataOutputSerializer global = new DataOutputSerializer(256);
    global.writeLong(checkpointId);
    List<DataOutputSerializer> operators = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    for (OperatorState op : states) {
      DataOutputSerializer out = new DataOutputSerializer(4096);
      int subtasks = 0;
      DataOutputSerializer body = new DataOutputSerializer(4096);
      for (Map.Entry<Integer, OperatorSubtaskState> e : op.getSubtaskStates().entrySet()) {
        for (KeyedStateHandle keyed : e.getValue().getManagedKeyedState()) {
          if (!(keyed instanceof IncrementalRemoteKeyedStateHandle)) {
            continue;
          }
          IncrementalRemoteKeyedStateHandle h = (IncrementalRemoteKeyedStateHandle) keyed;
          byte[] meta = CheckpointedShard.metaBytes(h);
          if (meta == null) {
            continue;
          }
          subtasks++;
          body.writeInt(e.getKey());
          body.writeInt(h.getKeyGroupRange().getStartKeyGroup());
          body.writeInt(h.getKeyGroupRange().getEndKeyGroup());
          body.writeLong(h.getCheckpointId());
          body.writeInt(meta.length);
          body.write(meta);
          List<HandleAndLocalPath> files = new ArrayList<>(h.getSharedState());
          files.addAll(h.getPrivateState());
          body.writeInt(files.size());
          for (HandleAndLocalPath f : files) {
            body.writeUTF(f.getLocalPath());
            writeHandle(body, f.getHandle(), checkpointId);
          }
        }
      }
      if (subtasks == 0) {
        continue;
      }
      String id = op.getOperatorID().toHexString();
      out.writeUTF(id);
      out.writeInt(op.getParallelism());
      out.writeInt(op.getMaxParallelism());
      out.writeInt(subtasks);
      out.write(body.getSharedBuffer(), 0, body.length());
      operators.add(out);
      ids.add(id);
    }
    if (ids.isEmpty()) {
      return 0;
    }
    global.writeInt(ids.size());
    for (int i = 0; i < ids.size(); i++) {
      writeFile(
          fs,
          new Path(checkpointDir, OPERATOR_PREFIX + ids.get(i)),
          OPERATOR_MAGIC,
          operators.get(i));
      global.writeUTF(ids.get(i));
    }
    writeFile(fs, new Path(checkpointDir, GLOBAL), GLOBAL_MAGIC, global);
    return ids.size();
  }

  /** Removes the sidecars of {@code checkpointDir}, the global snapshot first. */
  public static void remove(Path checkpointDir) throws IOException {
    FileSystem fs = checkpointDir.getFileSystem();
    fs.delete(new Path(checkpointDir, GLOBAL), false);
    FileStatus[] files;
    try {
      files = fs.listStatus(checkpointDir);
    } catch (java.io.FileNotFoundException e) {
      return;
    }
    for (FileStatus f : files == null ? new FileStatus[0] : files) {
      if (f.getPath().getName().startsWith(OPERATOR_PREFIX)) {
        fs.delete(f.getPath(), false);
      }
    }
  }

  /** Reads the sidecars of {@code checkpointDir}. */
  static CobbleCheckpoint read(Path checkpointDir, ClassLoader loader) throws IOException {
    FileSystem fs = checkpointDir.getFileSystem();
    DataInputDeserializer global = readFile(fs, new Path(checkpointDir, GLOBAL), GLOBAL_MAGIC);
    long checkpointId = global.readLong();
    int count = global.readInt();
    List<CobbleOperator> operators = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String id = global.readUTF();
      Path file = new Path(checkpointDir, OPERATOR_PREFIX + id);
      DataInputDeserializer in = readFile(fs, file, OPERATOR_MAGIC);
      String recorded = in.readUTF();
      int parallelism = in.readInt();
      int maxParallelism = in.readInt();
      int subtaskCount = in.readInt();
      List<CobbleOperator.Subtask> subtasks = new ArrayList<>();
      for (int s = 0; s < subtaskCount; s++) {
        int index = in.readInt();
        KeyGroupRange range = KeyGroupRange.of(in.readInt(), in.readInt());
        long shardCheckpoint = in.readLong();
        byte[] meta = new byte[in.readInt()];
        in.readFully(meta);
        int fileCount = in.readInt();
        List<HandleAndLocalPath> files = new ArrayList<>(fileCount);
        for (int f = 0; f < fileCount; f++) {
          String local = in.readUTF();
          files.add(HandleAndLocalPath.of(readHandle(in, file), local));
        }
        subtasks.add(
            new CobbleOperator.Subtask(
                index,
                CheckpointedShard.of(
                    range, shardCheckpoint, files, meta, file + " subtask " + index, loader)));
      }
      if (!recorded.equals(id)) {
        throw new IOException(file + " describes operator " + recorded + ", not " + id);
      }
      operators.add(new CobbleOperator(id, parallelism, maxParallelism, subtasks));
    }
    return new CobbleCheckpoint(
        checkpointId, checkpointDir.toString(), operators, CobbleCheckpoint.Source.SIDECARS);
  }

  private static void writeHandle(DataOutputSerializer out, StreamStateHandle h, long checkpointId)
      throws IOException {
    if (h instanceof ByteStreamStateHandle) {
      byte[] data = ((ByteStreamStateHandle) h).getData();
      out.writeByte(INLINE);
      out.writeUTF(((ByteStreamStateHandle) h).getHandleName());
      out.writeInt(data.length);
      out.write(data);
    } else if (h instanceof FileStateHandle) {
      out.writeByte(FILE);
      out.writeUTF(((FileStateHandle) h).getFilePath().toUri().toString());
      out.writeLong(h.getStateSize());
    } else {
      throw new IOException(
          "checkpoint "
              + checkpointId
              + " holds a Cobble file as a "
              + h.getClass().getName()
              + ", which sidecars do not describe (file merging?); tools read its _metadata");
    }
  }

  private static StreamStateHandle readHandle(DataInputDeserializer in, Path file)
      throws IOException {
    byte kind = in.readByte();
    if (kind == INLINE) {
      String name = in.readUTF();
      byte[] data = new byte[in.readInt()];
      in.readFully(data);
      return new ByteStreamStateHandle(name, data);
    }
    if (kind == FILE) {
      return new FileStateHandle(new Path(in.readUTF()), in.readLong());
    }
    throw new IOException(file + " is damaged: unknown file kind " + kind);
  }

  private static void writeFile(FileSystem fs, Path path, int magic, DataOutputSerializer payload)
      throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(payload.length() + 20);
    out.writeInt(magic);
    out.writeInt(FORMAT);
    out.writeInt(payload.length());
    out.write(payload.getSharedBuffer(), 0, payload.length());
    CRC32 crc = new CRC32();
    crc.update(payload.getSharedBuffer(), 0, payload.length());
    out.writeLong(crc.getValue());
    try (OutputStream s = fs.create(path, FileSystem.WriteMode.OVERWRITE)) {
      s.write(out.getSharedBuffer(), 0, out.length());
    }
  }

  private static DataInputDeserializer readFile(FileSystem fs, Path path, int magic)
      throws IOException {
    byte[] bytes;
    try (FSDataInputStream raw = fs.open(path);
        InputStream in = raw) {
      bytes = in.readAllBytes();
    } catch (java.io.FileNotFoundException e) {
      throw new IOException(
          "Cobble sidecar " + path + " is missing; the sidecars are incomplete", e);
    }
    DataInputDeserializer in = new DataInputDeserializer(bytes);
    if (bytes.length < 20 || in.readInt() != magic) {
      throw new IOException(path + " is not a Cobble sidecar (wrong magic)");
    }
    int format = in.readInt();
    if (format != FORMAT) {
      throw new IOException(
          path + " has Cobble sidecar format " + format + "; this Cobble reads " + FORMAT);
    }
    int length = in.readInt();
    if (length != bytes.length - 20) {
      throw new IOException(path + " is damaged: length " + length + " does not match the file");
    }
    CRC32 crc = new CRC32();
    crc.update(bytes, 12, length);
    if (crc.getValue() != new DataInputDeserializer(bytes, 12 + length, 8).readLong()) {
      throw new IOException(path + " is damaged: checksum mismatch");
    }
    return new DataInputDeserializer(bytes, 12, length);
  }
}
