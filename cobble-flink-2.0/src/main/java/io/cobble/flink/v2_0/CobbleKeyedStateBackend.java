package io.cobble.flink.v2_0;

import io.cobble.flink.state.CobbleBackendSpec;
import io.cobble.flink.state.CobbleKeyedStateCore;
import io.cobble.flink.state.KeyAccess;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Stream;
import javax.annotation.Nonnull;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SnapshotType;
import org.apache.flink.runtime.query.TaskKvStateRegistry;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.InternalKeyContextImpl;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.SavepointResources;
import org.apache.flink.runtime.state.SnapshotExecutionType;
import org.apache.flink.runtime.state.SnapshotResources;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategy;
import org.apache.flink.runtime.state.SnapshotStrategyRunner;
import org.apache.flink.runtime.state.StateSnapshotTransformer.StateSnapshotTransformFactory;
import org.apache.flink.runtime.state.StreamCompressionDecorator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/**
 * The keyed backend of the 2.0 line on Flink 2.0 (2.1 changed the base-class constructor);
 * everything but the base-class wiring is in the core.
 */
final class CobbleKeyedStateBackend<K> extends AbstractKeyedStateBackend<K>
    implements KeyAccess<K> {

  private final CobbleKeyedStateCore<K> core;

  CobbleKeyedStateBackend(
      CobbleBackendSpec<K> spec,
      TaskKvStateRegistry kvStateRegistry,
      TypeSerializer<K> keySerializer,
      ClassLoader userCodeClassLoader,
      ExecutionConfig executionConfig,
      TtlTimeProvider ttlTimeProvider,
      LatencyTrackingStateConfig latencyTrackingStateConfig,
      CloseableRegistry cancelStreamRegistry,
      StreamCompressionDecorator compression,
      KeyGroupRange keyGroupRange,
      int numberOfKeyGroups)
      throws Exception {
    super(
        kvStateRegistry,
        keySerializer,
        userCodeClassLoader,
        executionConfig,
        ttlTimeProvider,
        latencyTrackingStateConfig,
        cancelStreamRegistry,
        compression,
        new InternalKeyContextImpl<>(keyGroupRange, numberOfKeyGroups));
    this.core = CobbleKeyedStateCore.open(spec, this);
  }

  /** The shard, for the asynchronous backend over this one. */
  CobbleKeyedStateCore<K> core() {
    return core;
  }

  @Override
  public K currentKey() {
    return getCurrentKey();
  }

  @Override
  public int currentKeyGroup() {
    return getCurrentKeyGroupIndex();
  }

  @Override
  public TtlTimeProvider ttlTimeProvider() {
    return ttlTimeProvider;
  }

  @Override
  public void setCurrentKey(K newKey) {
    super.setCurrentKey(newKey);
    core.keyChanged();
  }

  @Override
  public void setCurrentKeyAndKeyGroup(K newKey, int newKeyGroupIndex) {
    super.setCurrentKeyAndKeyGroup(newKey, newKeyGroupIndex);
    core.keyChanged();
  }

  @Override
  public int numKeyValueStateEntries() {
    return core.numKeyValueStateEntries();
  }

  @Override
  public <N> Stream<K> getKeys(String state, N namespace) {
    return core.getKeys(state, namespace);
  }

  /**
   * The multi-state variant of 1.20 and 2.1+ (absent in 2.0): keys present in any of the states.
   */
  public <N> Stream<K> getKeys(List<String> states, N namespace) {
    return states.stream().flatMap(s -> core.getKeys(s, namespace)).distinct();
  }

  @Override
  public <N> Stream<Tuple2<K, N>> getKeysAndNamespaces(String state) {
    return core.getKeysAndNamespaces(state);
  }

  @Nonnull
  @Override
  public <N, SV, SEV, S extends State, IS extends S> IS createOrUpdateInternalState(
      @Nonnull TypeSerializer<N> namespaceSerializer,
      @Nonnull StateDescriptor<S, SV> stateDesc,
      @Nonnull StateSnapshotTransformFactory<SEV> snapshotTransformFactory)
      throws Exception {
    return core.createOrUpdateInternalState(
        namespaceSerializer, stateDesc, snapshotTransformFactory, false);
  }

  @Nonnull
  @Override
  public <N, SV, SEV, S extends State, IS extends S> IS createOrUpdateInternalState(
      @Nonnull TypeSerializer<N> namespaceSerializer,
      @Nonnull StateDescriptor<S, SV> stateDesc,
      @Nonnull StateSnapshotTransformFactory<SEV> snapshotTransformFactory,
      boolean allowFutureMetadataUpdates)
      throws Exception {
    return core.createOrUpdateInternalState(
        namespaceSerializer, stateDesc, snapshotTransformFactory, allowFutureMetadataUpdates);
  }

  @Nonnull
  @Override
  public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
      KeyGroupedInternalPriorityQueue<T> create(
          @Nonnull String stateName, @Nonnull TypeSerializer<T> byteOrderedElementSerializer) {
    return core.createQueue(stateName, byteOrderedElementSerializer, false);
  }

  @Override
  public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
      KeyGroupedInternalPriorityQueue<T> create(
          @Nonnull String stateName,
          @Nonnull TypeSerializer<T> byteOrderedElementSerializer,
          boolean allowFutureMetadataUpdates) {
    return core.createQueue(stateName, byteOrderedElementSerializer, allowFutureMetadataUpdates);
  }

  @Nonnull
  @Override
  public RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(
      long checkpointId,
      long timestamp,
      @Nonnull CheckpointStreamFactory streamFactory,
      @Nonnull CheckpointOptions checkpointOptions)
      throws Exception {
    return run(core.snapshotStrategy(), checkpointId, timestamp, streamFactory, checkpointOptions);
  }

  private <R extends SnapshotResources> RunnableFuture<SnapshotResult<KeyedStateHandle>> run(
      SnapshotStrategy<KeyedStateHandle, R> strategy,
      long checkpointId,
      long timestamp,
      CheckpointStreamFactory streamFactory,
      CheckpointOptions options)
      throws Exception {
    return new SnapshotStrategyRunner<>(
            "Cobble checkpoint", strategy, cancelStreamRegistry, SnapshotExecutionType.ASYNCHRONOUS)
        .snapshot(checkpointId, timestamp, streamFactory, options);
  }

  @Nonnull
  @Override
  public SavepointResources<K> savepoint() {
    // The resources hold the shard as of this call, so the rows are written asynchronously.
    return new SavepointResources<>(
        core.canonicalSavepoint(keyGroupCompressionDecorator), SnapshotExecutionType.ASYNCHRONOUS);
  }

  @Override
  public boolean requiresLegacySynchronousTimerSnapshots(SnapshotType checkpointType) {
    return core.requiresLegacySynchronousTimerSnapshots(checkpointType.isSavepoint());
  }

  @Override
  public boolean isSafeToReuseKVState() {
    return true;
  }

  /** Flink 2.2's backend identifier, declared here so the method exists on every minor. */
  public String getBackendTypeIdentifier() {
    return "cobble";
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) {
    core.notifyCheckpointComplete(checkpointId);
  }

  @Override
  public void notifyCheckpointAborted(long checkpointId) {
    core.notifyCheckpointAborted(checkpointId);
  }

  @Override
  public void dispose() {
    super.dispose();
    core.dispose();
  }
}
