package io.cobble.flink.async;

import io.cobble.flink.state.CobbleKeyedStateCore;
import io.cobble.flink.state.StateRowReader;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.RunnableFuture;
import javax.annotation.Nonnull;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.v2.State;
import org.apache.flink.api.common.state.v2.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.asyncprocessing.StateRequestHandler;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SnapshotType;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.AsyncKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.v2.StateDescriptorUtils;
import org.apache.flink.runtime.state.v2.internal.InternalKeyedState;

/**
 * Cobble's asynchronous keyed backend (Flink 2.x State V2), over the line's synchronous keyed
 * backend and its shard: each asynchronous state is served by the synchronous state of the same
 * name, so checkpoints, restore, rescaling and timers are the synchronous backend's (native
 * checkpoints). Requests run on an {@link AsyncStateRunner}. A line subclass creates Flink's state
 * objects and the executor, whose signatures differ between Flink 2.0 and 2.1.
 */
public abstract class CobbleAsyncKeyedBackend<K> implements AsyncKeyedStateBackend<K> {

  protected final AbstractKeyedStateBackend<K> sync;
  private final CobbleKeyedStateCore<K> core;
  protected final AsyncStates states = new AsyncStates();
  private final Map<String, State> byName = new HashMap<>();
  private final ExecutionConfig executionConfig;
  protected final String operator;
  protected final int readThreads;
  protected final int writeThreads;
  private StateRequestHandler handler;

  protected CobbleAsyncKeyedBackend(
      AbstractKeyedStateBackend<K> sync,
      CobbleKeyedStateCore<K> core,
      ExecutionConfig executionConfig,
      String operator,
      int readThreads,
      int writeThreads) {
    this.sync = sync;
    this.core = core;
    this.executionConfig = executionConfig;
    this.operator = operator;
    this.readThreads = readThreads;
    this.writeThreads = writeThreads;
  }

  /** Flink's state object of {@code descriptor} that sends its requests to {@code handler}. */
  protected abstract <SV> InternalKeyedState<K, ?, SV> newState(
      StateRequestHandler handler, StateDescriptor<SV> descriptor);

  /** A runner of this backend's requests; each executor Flink asks for gets its own. */
  protected AsyncStateRunner<K> newRunner() {
    return new AsyncStateRunner<>(sync, states, operator, readThreads, writeThreads);
  }

  @Override
  public void setup(@Nonnull StateRequestHandler stateRequestHandler) {
    this.handler = stateRequestHandler;
  }

  @Override
  @SuppressWarnings("unchecked")
  public <N, S extends State, SV> S getOrCreateKeyedState(
      N defaultNamespace, TypeSerializer<N> namespaceSerializer, StateDescriptor<SV> descriptor)
      throws Exception {
    S existing = (S) byName.get(descriptor.getStateId());
    if (existing != null) {
      return existing;
    }
    S created = (S) createStateInternal(defaultNamespace, namespaceSerializer, descriptor);
    byName.put(descriptor.getStateId(), created);
    return created;
  }

  @Override
  @SuppressWarnings("unchecked")
  public <N, S extends InternalKeyedState, SV> S createStateInternal(
      N defaultNamespace, TypeSerializer<N> namespaceSerializer, StateDescriptor<SV> descriptor)
      throws Exception {
    if (handler == null) {
      throw new IllegalStateException(
          "setup(StateRequestHandler) was not called before " + descriptor);
    }
    descriptor.initializeSerializerUnlessSet(executionConfig);
    org.apache.flink.api.common.state.StateDescriptor<?, ?> v1 =
        StateDescriptorUtils.transformFromV2ToV1(descriptor);
    boolean ttl = descriptor.getTtlConfig() != null && descriptor.getTtlConfig().isEnabled();
    if (ttl) {
      v1.enableTimeToLive(descriptor.getTtlConfig());
    }
    // Through the synchronous backend: meta data, migration, TTL and latency decorators.
    InternalKvState<?, ?, ?> syncState =
        (InternalKvState<?, ?, ?>)
            sync.getOrCreateKeyedState(
                namespaceSerializer, (org.apache.flink.api.common.state.StateDescriptor) v1);
    StateRowReader.Factory<K, N> readers = ttl ? null : readers(v1, namespaceSerializer);
    InternalKeyedState<K, ?, SV> state = newState(handler, descriptor);
    states.register(state, syncState, readers, defaultNamespace, userKeys(v1), values(v1));
    return (S) state;
  }

  private static TypeSerializer<?> userKeys(
      org.apache.flink.api.common.state.StateDescriptor<?, ?> v1) {
    return v1 instanceof MapStateDescriptor
        ? ((MapStateDescriptor<?, ?>) v1).getKeySerializer()
        : null;
  }

  private static TypeSerializer<?> values(
      org.apache.flink.api.common.state.StateDescriptor<?, ?> v1) {
    switch (v1.getType()) {
      case MAP:
        return ((MapStateDescriptor<?, ?>) v1).getValueSerializer();
      case LIST:
        return ((org.apache.flink.api.common.state.ListStateDescriptor<?>) v1)
            .getElementSerializer();
      default:
        return v1.getSerializer();
    }
  }

  private <N> StateRowReader.Factory<K, N> readers(
      org.apache.flink.api.common.state.StateDescriptor<?, ?> v1, TypeSerializer<N> namespaces) {
    switch (v1.getType()) {
      case VALUE:
      case REDUCING:
      case AGGREGATING:
        return StateRowReader.factory(core, v1.getName(), namespaces, v1.getSerializer(), null);
      case MAP:
        MapStateDescriptor<?, ?> map = (MapStateDescriptor<?, ?>) v1;
        return StateRowReader.factory(
            core, v1.getName(), namespaces, map.getValueSerializer(), map.getKeySerializer());
      default:
        return null;
    }
  }

  @Override
  public KeyGroupRange getKeyGroupRange() {
    return sync.getKeyGroupRange();
  }

  @Nonnull
  @Override
  public RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(
      long checkpointId,
      long timestamp,
      @Nonnull CheckpointStreamFactory streamFactory,
      @Nonnull CheckpointOptions checkpointOptions)
      throws Exception {
    // Flink drains the in-flight requests before it takes a snapshot.
    return sync.snapshot(checkpointId, timestamp, streamFactory, checkpointOptions);
  }

  @Nonnull
  @Override
  public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
      KeyGroupedInternalPriorityQueue<T> create(
          @Nonnull String stateName, @Nonnull TypeSerializer<T> byteOrderedElementSerializer) {
    return sync.create(stateName, byteOrderedElementSerializer);
  }

  @Override
  public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
      KeyGroupedInternalPriorityQueue<T> create(
          @Nonnull String stateName,
          @Nonnull TypeSerializer<T> byteOrderedElementSerializer,
          boolean allowFutureMetadataUpdates) {
    return sync.create(stateName, byteOrderedElementSerializer, allowFutureMetadataUpdates);
  }

  @Override
  public boolean requiresLegacySynchronousTimerSnapshots(SnapshotType checkpointType) {
    return sync.requiresLegacySynchronousTimerSnapshots(checkpointType);
  }

  /** Flink 2.2's backend identifier, declared here so the method exists on every minor. */
  public String getBackendTypeIdentifier() {
    return "cobble";
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    sync.notifyCheckpointComplete(checkpointId);
  }

  @Override
  public void notifyCheckpointAborted(long checkpointId) throws Exception {
    sync.notifyCheckpointAborted(checkpointId);
  }

  @Override
  public void notifyCheckpointSubsumed(long checkpointId) throws Exception {
    sync.notifyCheckpointSubsumed(checkpointId);
  }

  @Override
  public void dispose() {
    sync.dispose();
  }

  @Override
  public void close() throws java.io.IOException {
    sync.close();
  }
}
