package io.cobble.flink.state;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.shim.FlinkLineShim;
import io.cobble.flink.shim.RecoveryClaimMode;
import io.cobble.flink.shim.RunningFlink;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.annotation.Nullable;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.memory.MemoryManager;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;

/**
 * What a line's backend passes to {@link CobbleKeyedStateCore#open}: Flink's parameters for one
 * keyed backend, already taken out of the line's parameter object.
 */
public final class CobbleBackendSpec<K> {

  /** The keys naming a restore path: 1.20 renamed it and keeps the old one as an alias. */
  private static final String[] RESTORE_PATH_KEYS = {
    "execution.state-recovery.path", "execution.savepoint.path"
  };

  final CobbleStateSettings settings;
  final JobID jobId;
  final String operatorIdentifier;
  final TypeSerializer<K> keySerializer;
  final int numberOfKeyGroups;
  final KeyGroupRange keyGroupRange;
  final Collection<KeyedStateHandle> stateHandles;
  final CloseableRegistry cancelStreamRegistry;
  final ClassLoader classLoader;
  @Nullable final MemoryManager memoryManager;
  final double managedMemoryFraction;
  final MetricGroup metricGroup;
  final Path workDir;
  final Function<IncrementalRemoteKeyedStateHandle, StreamStateHandle> metaHandleOf;

  /** The task's checkpoint storage, asked only when the working files go there. */
  @Nullable Supplier<CheckpointStorageAccess> checkpointStorage;

  public CobbleBackendSpec(
      CobbleStateSettings settings,
      JobID jobId,
      String operatorIdentifier,
      TypeSerializer<K> keySerializer,
      int numberOfKeyGroups,
      KeyGroupRange keyGroupRange,
      Collection<KeyedStateHandle> stateHandles,
      CloseableRegistry cancelStreamRegistry,
      ClassLoader classLoader,
      @Nullable MemoryManager memoryManager,
      double managedMemoryFraction,
      MetricGroup metricGroup,
      String[] tmpDirs,
      Function<IncrementalRemoteKeyedStateHandle, StreamStateHandle> metaHandleOf) {
    this.settings = settings;
    this.jobId = jobId;
    this.operatorIdentifier = operatorIdentifier;
    this.keySerializer = keySerializer;
    this.numberOfKeyGroups = numberOfKeyGroups;
    this.keyGroupRange = keyGroupRange;
    this.stateHandles = stateHandles;
    this.cancelStreamRegistry = cancelStreamRegistry;
    this.classLoader = classLoader;
    this.memoryManager = memoryManager;
    this.managedMemoryFraction = managedMemoryFraction;
    this.metricGroup = metricGroup;
    this.metaHandleOf = metaHandleOf;
    this.workDir = workDir(settings.localDirs(), tmpDirs);
  }

  /**
   * The task's checkpoint storage ({@code Environment#getCheckpointStorageAccess}), where the
   * working files go with {@code localdir.primary-high-priority=false}.
   */
  public void checkpointStorage(Supplier<CheckpointStorageAccess> storage) {
    this.checkpointStorage = storage;
  }

  private Path workDir(List<Path> configured, String[] tmpDirs) {
    String name =
        "cobble-"
            + jobId
            + "-"
            + operatorIdentifier.replaceAll("[^A-Za-z0-9_.-]", "_")
            + "-kg"
            + keyGroupRange.getStartKeyGroup()
            + "-"
            + keyGroupRange.getEndKeyGroup()
            + "-"
            + UUID.randomUUID();
    int spread = Math.abs((jobId + operatorIdentifier + keyGroupRange).hashCode());
    if (!configured.isEmpty()) {
      return configured.get(spread % configured.size()).resolve(name);
    }
    if (tmpDirs == null || tmpDirs.length == 0) {
      return Paths.get(System.getProperty("java.io.tmpdir")).resolve(name);
    }
    return Paths.get(tmpDirs[spread % tmpDirs.length]).resolve(name);
  }

  /**
   * Rejects a restore from a savepoint or retained checkpoint in NO_CLAIM or LEGACY mode before any
   * work: Cobble uses the restored files in place and hands its own files to the checkpoints that
   * follow, which only CLAIM makes safe.
   */
  public static void checkClaimMode(Map<String, String> jobConfiguration) {
    if (!namesRestorePath(jobConfiguration)) {
      return;
    }
    checkClaimModeOf(jobConfiguration);
  }

  /**
   * {@link #checkClaimMode} for Flink 1.17 and 1.18, whose TaskManagers never see the restore
   * settings of a job submitted to a session cluster. They do see them where the restore is part of
   * the cluster's configuration (an application-mode deployment whose configuration carries them, a
   * per-job MiniCluster), so {@code clusterConfiguration} is read when the job's configuration
   * names no restore path; a session submission is still refused only at its first checkpoint.
   */
  public static void checkClaimMode(
      Map<String, String> jobConfiguration, Map<String, String> clusterConfiguration) {
    if (namesRestorePath(jobConfiguration)) {
      checkClaimModeOf(jobConfiguration);
    } else if (namesRestorePath(clusterConfiguration)) {
      checkClaimModeOf(clusterConfiguration);
    }
  }

  private static boolean namesRestorePath(Map<String, String> configuration) {
    for (String key : RESTORE_PATH_KEYS) {
      if (configuration.get(key) != null) {
        return true;
      }
    }
    return false;
  }

  private static void checkClaimModeOf(Map<String, String> jobConfiguration) {
    FlinkLineShim shim = ShimLoader.current();
    String version = RunningFlink.version();
    RecoveryClaimMode mode = shim.recoveryClaimMode(version, jobConfiguration);
    if (mode != RecoveryClaimMode.CLAIM) {
      throw new IllegalArgumentException(
          "The Cobble state backend restores only in CLAIM mode, but this job restores in "
              + mode
              + " mode. Set '"
              + shim.recoveryClaimModeKey(version)
              + "' to CLAIM (or pass -restoreMode CLAIM / -claimMode CLAIM to 'flink run').");
    }
  }
}
