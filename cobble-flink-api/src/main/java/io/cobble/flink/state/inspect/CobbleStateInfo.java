package io.cobble.flink.state.inspect;

import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot.BackendStateType;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot.CommonOptionsKeys;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot.CommonSerializerKeys;

/** A state of a Cobble operator: its name, kind and serializers as the checkpoint recorded them. */
public final class CobbleStateInfo {

  /** The kind of a timer queue (Flink's priority-queue state), which has no state descriptor. */
  public static final String TIMERS = "TIMERS";

  private final StateMetaInfoSnapshot meta;

  CobbleStateInfo(StateMetaInfoSnapshot meta) {
    this.meta = meta;
  }

  public String name() {
    return meta.getName();
  }

  /**
   * VALUE, LIST, MAP, REDUCING, AGGREGATING (Flink's state descriptor types), or {@link #TIMERS}.
   */
  public String kind() {
    if (meta.getBackendStateType() == BackendStateType.PRIORITY_QUEUE) {
      return TIMERS;
    }
    return meta.getOption(CommonOptionsKeys.KEYED_STATE_TYPE);
  }

  /** Whether rows hold state values (else timers). */
  public boolean isKeyValue() {
    return meta.getBackendStateType() == BackendStateType.KEY_VALUE;
  }

  /** The namespace serializer; null for timers. */
  public TypeSerializerSnapshot<?> namespaceSerializer() {
    return meta.getTypeSerializerSnapshot(CommonSerializerKeys.NAMESPACE_SERIALIZER);
  }

  /** The value serializer (for timers, the timer element serializer). */
  public TypeSerializerSnapshot<?> valueSerializer() {
    return meta.getTypeSerializerSnapshot(CommonSerializerKeys.VALUE_SERIALIZER);
  }

  @Override
  public String toString() {
    return name() + " (" + kind() + ")";
  }
}
