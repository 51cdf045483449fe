package io.cobble.flink.state;

import java.lang.reflect.Constructor;
import org.apache.flink.runtime.state.PhysicalStateHandleID;
import org.apache.flink.runtime.state.PlaceholderStreamStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;

/**
 * Placeholders for files a confirmed checkpoint already holds. The constructor gained a {@code
 * boolean isFileMerged} in Flink 1.20 and lost the two-argument form, so one jar per line cannot
 * name either; this resolves whichever the running Flink has, once.
 */
final class Placeholders {

  private static final Constructor<PlaceholderStreamStateHandle> CONSTRUCTOR = find();

  private Placeholders() {}

  private static Constructor<PlaceholderStreamStateHandle> find() {
    try {
      return PlaceholderStreamStateHandle.class.getConstructor(
          PhysicalStateHandleID.class, long.class, boolean.class);
    } catch (NoSuchMethodException e) {
      try {
        return PlaceholderStreamStateHandle.class.getConstructor(
            PhysicalStateHandleID.class, long.class);
      } catch (NoSuchMethodException e2) {
        throw new IllegalStateException(
            "This Flink's PlaceholderStreamStateHandle has no known constructor", e2);
      }
    }
  }

  static StreamStateHandle of(StreamStateHandle confirmed) {
    try {
      return CONSTRUCTOR.getParameterCount() == 3
          ? CONSTRUCTOR.newInstance(
              confirmed.getStreamStateHandleID(), confirmed.getStateSize(), false)
          : CONSTRUCTOR.newInstance(confirmed.getStreamStateHandleID(), confirmed.getStateSize());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot create a placeholder for " + confirmed, e);
    }
  }
}
