package io.cobble.flink.state.inspect;

import io.cobble.flink.state.CheckpointedShard;
import java.io.DataInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;

/**
 * Opens a retained checkpoint or native savepoint and finds the keyed state the Cobble backend
 * wrote in it: from the sidecars the HA wrapper keeps next to the checkpoint when they exist
 * ({@link CheckpointSidecars}), else from Flink's {@code _metadata} alone. No running job is
 * needed, and reading never writes to the checkpoint.
 */
public final class CheckpointReader {

  static final String METADATA = "_metadata";
  private static final String CHECKPOINT_PREFIX = "chk-";

  private CheckpointReader() {}

  /** {@link #open(String, ClassLoader)} with this class's class loader. */
  public static CobbleCheckpoint open(String location) throws IOException {
    return open(location, CheckpointReader.class.getClassLoader());
  }

  /**
   * Opens the checkpoint at {@code location}: a {@code chk-N} directory (or savepoint directory),
   * its {@code _metadata} file, or a job's checkpoint directory, of which the newest complete
   * {@code chk-N} is read. {@code loader} resolves the serializers the job recorded.
   */
  public static CobbleCheckpoint open(String location, ClassLoader loader) throws IOException {
    Path checkpoint = resolve(new Path(location));
    if (CheckpointSidecars.exist(checkpoint)) {
      return CheckpointSidecars.read(checkpoint, loader);
    }
    CheckpointMetadata metadata;
    Path metaFile = new Path(checkpoint, METADATA);
    try (FSDataInputStream in = metaFile.getFileSystem().open(metaFile)) {
      metadata =
          Checkpoints.loadCheckpointMetadata(
              new DataInputStream(in), loader, checkpoint.toString());
    } catch (IOException | RuntimeException e) {
      throw new IOException(
          metaFile + " is not a readable Flink checkpoint metadata file: " + e.getMessage(), e);
    }
    List<CobbleOperator> operators = new ArrayList<>();
    for (OperatorState op : metadata.getOperatorStates()) {
      List<CobbleOperator.Subtask> subtasks = new ArrayList<>();
      for (Map.Entry<Integer, OperatorSubtaskState> e : op.getSubtaskStates().entrySet()) {
        for (KeyedStateHandle keyed : e.getValue().getManagedKeyedState()) {
          if (!(keyed instanceof IncrementalRemoteKeyedStateHandle)) {
            continue;
          }
          CheckpointedShard shard =
              CheckpointedShard.read((IncrementalRemoteKeyedStateHandle) keyed, loader);
          if (shard != null) {
            subtasks.add(new CobbleOperator.Subtask(e.getKey(), shard));
          }
        }
      }
      if (!subtasks.isEmpty()) {
        operators.add(
            new CobbleOperator(
                op.getOperatorID().toHexString(),
                op.getParallelism(),
                op.getMaxParallelism(),
                subtasks));
      }
    }
    if (operators.isEmpty()) {
      throw new IOException(
          "checkpoint "
              + metadata.getCheckpointId()
              + " at "
              + checkpoint
              + " holds no keyed state of the Cobble state backend ("
              + metadata.getOperatorStates().size()
              + " operators, none with a Cobble snapshot); was the job run with"
              + " state.backend.type: io.cobble.flink.state.CobbleStateBackendFactory?");
    }
    return new CobbleCheckpoint(
        metadata.getCheckpointId(),
        checkpoint.toString(),
        operators,
        CobbleCheckpoint.Source.METADATA);
  }

  /** The checkpoint directory {@code location} names; see {@link #open(String, ClassLoader)}. */
  static Path resolve(Path location) throws IOException {
    FileSystem fs = location.getFileSystem();
    FileStatus status;
    try {
      status = fs.getFileStatus(location);
    } catch (FileNotFoundException e) {
      throw new IOException("no checkpoint at " + location + ": the path does not exist", e);
    }
    if (!status.isDir()) {
      if (METADATA.equals(location.getName())) {
        return location.getParent();
      }
      throw new IOException(
          location
              + " is not a checkpoint: expected a chk-N directory, its _metadata file or a"
              + " job's checkpoint directory");
    }
    if (fs.exists(new Path(location, METADATA))) {
      return location;
    }
    Path newest = null;
    long newestId = -1;
    FileStatus[] children = fs.listStatus(location);
    for (FileStatus child : children == null ? new FileStatus[0] : children) {
      String name = child.getPath().getName();
      if (!child.isDir() || !name.startsWith(CHECKPOINT_PREFIX)) {
        continue;
      }
      long id;
      try {
        id = Long.parseLong(name.substring(CHECKPOINT_PREFIX.length()));
      } catch (NumberFormatException e) {
        continue;
      }
      if (id > newestId && fs.exists(new Path(child.getPath(), METADATA))) {
        newest = child.getPath();
        newestId = id;
      }
    }
    if (newest == null) {
      throw new IOException(
          location
              + " is not a checkpoint: it has no _metadata and no complete chk-N directory (one"
              + " with a _metadata file)");
    }
    return newest;
  }
}
