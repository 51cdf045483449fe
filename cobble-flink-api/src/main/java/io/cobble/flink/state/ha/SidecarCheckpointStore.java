package io.cobble.flink.state.ha;

import io.cobble.flink.state.inspect.CheckpointSidecars;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointsCleaner;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStore;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A job's completed-checkpoint store that keeps the Cobble sidecars ({@link CheckpointSidecars})
 * next to every retained checkpoint. Flink removes a discarded {@code chk-N} with a non-recursive
 * delete, which fails on a directory that still holds sidecars, so they are removed before the
 * delegate may discard it: before each add, from every retained checkpoint the add may subsume
 * (written again for those it kept), and before shutdown, from those shutdown discards. Sidecars
 * are a convenience: failing to write one is logged and never fails a checkpoint.
 */
final class SidecarCheckpointStore implements CompletedCheckpointStore {

  private static final Logger LOG = LoggerFactory.getLogger(SidecarCheckpointStore.class);

  private final CompletedCheckpointStore delegate;

  SidecarCheckpointStore(CompletedCheckpointStore delegate) {
    this.delegate = delegate;
  }

  @Override
  public CompletedCheckpoint addCheckpointAndSubsumeOldestOne(
      CompletedCheckpoint checkpoint, CheckpointsCleaner cleaner, Runnable postCleanup)
      throws Exception {
    List<CompletedCheckpoint> retained = delegate.getAllCheckpoints();
    int kept = Math.max(0, delegate.getMaxNumberOfRetainedCheckpoints() - 1);
    List<CompletedCheckpoint> atRisk =
        new ArrayList<>(retained.subList(0, Math.max(0, retained.size() - kept)));
    for (CompletedCheckpoint c : atRisk) {
      remove(c);
    }
    try {
      return delegate.addCheckpointAndSubsumeOldestOne(checkpoint, cleaner, postCleanup);
    } finally {
      Set<Long> still = new HashSet<>();
      for (CompletedCheckpoint c : delegate.getAllCheckpoints()) {
        still.add(c.getCheckpointID());
      }
      for (CompletedCheckpoint c : atRisk) {
        if (still.contains(c.getCheckpointID())) {
          write(c);
        }
      }
      if (still.contains(checkpoint.getCheckpointID())) {
        write(checkpoint);
      }
    }
  }

  @Override
  public void shutdown(JobStatus jobStatus, CheckpointsCleaner cleaner) throws Exception {
    for (CompletedCheckpoint c : delegate.getAllCheckpoints()) {
      if (c.shouldBeDiscardedOnShutdown(jobStatus)) {
        remove(c);
      }
    }
    delegate.shutdown(jobStatus, cleaner);
  }

  private static Path directory(CompletedCheckpoint c) {
    // Savepoints belong to the user, and a checkpoint without a directory has nowhere to keep them.
    if (c.getProperties().isSavepoint() || c.getExternalPointer() == null) {
      return null;
    }
    return new Path(c.getExternalPointer());
  }

  private static void write(CompletedCheckpoint c) {
    Path dir = directory(c);
    if (dir == null) {
      return;
    }
    try {
      int operators =
          CheckpointSidecars.write(c.getCheckpointID(), dir, c.getOperatorStates().values());
      LOG.debug("Wrote Cobble sidecars of {} operator(s) to {}", operators, dir);
    } catch (Exception e) {
      LOG.warn(
          "Cannot write the Cobble sidecars of checkpoint {} to {}; tools read its _metadata",
          c.getCheckpointID(),
          dir,
          e);
      remove(c);
    }
  }

  private static void remove(CompletedCheckpoint c) {
    Path dir = directory(c);
    if (dir == null) {
      return;
    }
    try {
      CheckpointSidecars.remove(dir);
    } catch (Exception e) {
      LOG.warn(
          "Cannot remove the Cobble sidecars of checkpoint {} from {}",
          c.getCheckpointID(),
          dir,
          e);
    }
  }

  @Override
  public List<CompletedCheckpoint> getAllCheckpoints() throws Exception {
    return delegate.getAllCheckpoints();
  }

  @Override
  public int getNumberOfRetainedCheckpoints() {
    return delegate.getNumberOfRetainedCheckpoints();
  }

  @Override
  public int getMaxNumberOfRetainedCheckpoints() {
    return delegate.getMaxNumberOfRetainedCheckpoints();
  }

  @Override
  public boolean requiresExternalizedCheckpoints() {
    return delegate.requiresExternalizedCheckpoints();
  }

  @Override
  public SharedStateRegistry getSharedStateRegistry() {
    return delegate.getSharedStateRegistry();
  }

  @Override
  public CompletedCheckpoint getLatestCheckpoint() throws Exception {
    return delegate.getLatestCheckpoint();
  }

  @Override
  public long getLatestCheckpointId() {
    return delegate.getLatestCheckpointId();
  }
}
