package io.cobble.flink.state;

import io.cobble.compaction.CompactionFilter;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/**
 * Flink state TTL during Cobble compaction, as Flink's RocksDB compaction filter does it: a state
 * whose TTL config enables the compaction-filter cleanup (Flink's default) has its expired values
 * dropped when compaction rewrites them at the bottom of the tree. Flink's TTL decorators store a
 * {@code TtlValue} whose serialized form starts with the last-access timestamp (8 bytes, big
 * endian) followed by the user value; value, reducing and aggregating states store it as the whole
 * column, map states after the one-byte null flag of each entry. A value is expired, as in Flink's
 * {@code TtlUtils}, once its timestamp plus the TTL is at most the time provider's now. List states
 * keep their expired elements until Flink's own decorators remove them on access.
 */
final class TtlCompactionFilter implements CompactionFilter {

  private final TtlTimeProvider time;

  /** Per column family: the TTL in milliseconds and the offset of the timestamp in a value. */
  private final Map<String, long[]> families = new ConcurrentHashMap<>();

  TtlCompactionFilter(TtlTimeProvider time) {
    this.time = time;
  }

  /** Drops expired values of {@code family} from now on if {@code desc} asks for it. */
  void register(String family, StateDescriptor<?, ?> desc) {
    StateTtlConfig ttl = desc.getTtlConfig();
    if (!ttl.isEnabled() || !ttl.getCleanupStrategies().inRocksdbCompactFilter()) {
      families.remove(family);
      return;
    }
    long offset;
    switch (desc.getType()) {
      case VALUE:
      case REDUCING:
      case AGGREGATING:
        offset = 0;
        break;
      case MAP:
        offset = 1;
        break;
      default:
        families.remove(family);
        return;
    }
    families.put(family, new long[] {ttlMillis(ttl), offset});
  }

  @Override
  public ValueFilter forFamily(String family) {
    long[] ttl = families.get(family);
    if (ttl == null) {
      return null;
    }
    long now = time.currentTimestamp();
    long ttlMillis = ttl[0];
    int offset = (int) ttl[1];
    return (position, value) -> expired(value, offset, ttlMillis, now);
  }

  static boolean expired(byte[] value, int offset, long ttlMillis, long now) {
    if (value.length < offset + Long.BYTES || (offset == 1 && value[0] != 0)) {
      return false; // not a TtlValue (or a null map value): keep it
    }
    long lastAccess = 0;
    for (int i = 0; i < Long.BYTES; i++) {
      lastAccess = (lastAccess << 8) | (value[offset + i] & 0xFF);
    }
    long expiresAt = lastAccess + ttlMillis;
    if (ttlMillis > 0 && expiresAt < lastAccess) {
      expiresAt = Long.MAX_VALUE;
    }
    return expiresAt <= now;
  }

  /**
   * The TTL in milliseconds: {@code getTimeToLive()} (a Duration) from Flink 1.19, {@code getTtl()}
   * (a Flink Time) up to 1.20; no method spans 1.17 to 2.x.
   */
  static long ttlMillis(StateTtlConfig config) {
    try {
      for (Method m : config.getClass().getMethods()) {
        if (m.getName().equals("getTimeToLive") && m.getParameterCount() == 0) {
          return ((Duration) m.invoke(config)).toMillis();
        }
      }
      Object time = config.getClass().getMethod("getTtl").invoke(config);
      return (Long) time.getClass().getMethod("toMilliseconds").invoke(time);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("Cannot read the TTL of a Flink StateTtlConfig", e);
    }
  }
}
