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
 * column, map states after the one-byte null flag of each entry, list states as each element of the
 * list column ({@code varint(length) TtlValue}). A value is expired, as in Flink's {@code
 * TtlUtils}, once its timestamp plus the TTL is at most the time provider's now. A list loses its
 * expired elements and disappears once all are expired. Flink's RocksDB filter drops only the
 * expired elements before the first live one, because it cannot find element boundaries cheaply in
 * every list; here each element carries its length, so every expired element goes, which is what
 * Flink's list decorator itself does when it cleans a list up on access.
 */
final class TtlCompactionFilter implements CompactionFilter {

  private final TtlTimeProvider time;

  /** Offset marking a list column: a timestamp at the start of each element. */
  private static final long LIST = -1;

  /**
   * Per column family: the TTL in milliseconds and the offset of the timestamp in a value ({@link
   * #LIST} for the elements of a list).
   */
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
      case LIST:
        offset = LIST;
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
    if (ttl[1] == LIST) {
      return new ValueFilter() {
        @Override
        public boolean drop(int position, byte[] value) {
          return filter(position, value) == null;
        }

        @Override
        public byte[] filter(int position, byte[] value) {
          return liveElements(value, ttlMillis, now);
        }
      };
    }
    int offset = (int) ttl[1];
    return (position, value) -> expired(value, offset, ttlMillis, now);
  }

  /**
   * The list column {@code list} without its expired elements: {@code list} itself when none is
   * expired, null when all are. A column that does not parse as length-prefixed elements is kept
   * whole.
   */
  static byte[] liveElements(byte[] list, long ttlMillis, long now) {
    int expired = 0;
    int elements = 0;
    int keptBytes = 0;
    for (int pos = 0; pos < list.length; elements++) {
      int start = pos;
      long length = 0;
      int shift = 0;
      while (true) {
        if (pos >= list.length || shift > 28) {
          return list;
        }
        int b = list[pos++] & 0xFF;
        length |= (long) (b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
          break;
        }
        shift += 7;
      }
      if (length < Long.BYTES || length > list.length - pos) {
        return list; // not a list of TtlValues: keep it
      }
      int timestampAt = pos;
      pos += (int) length;
      if (expiredAt(list, timestampAt, ttlMillis, now)) {
        expired++;
      } else {
        keptBytes += pos - start;
      }
    }
    if (expired == 0) {
      return list;
    }
    if (expired == elements) {
      return null;
    }
    byte[] kept = new byte[keptBytes];
    int out = 0;
    for (int pos = 0; pos < list.length; ) {
      int start = pos;
      int length = 0;
      for (int shift = 0; ; shift += 7) {
        int b = list[pos++] & 0xFF;
        length |= (b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
          break;
        }
      }
      int timestampAt = pos;
      pos += length;
      if (!expiredAt(list, timestampAt, ttlMillis, now)) {
        System.arraycopy(list, start, kept, out, pos - start);
        out += pos - start;
      }
    }
    return kept;
  }

  static boolean expired(byte[] value, int offset, long ttlMillis, long now) {
    if (value.length < offset + Long.BYTES || (offset == 1 && value[0] != 0)) {
      return false; // not a TtlValue (or a null map value): keep it
    }
    return expiredAt(value, offset, ttlMillis, now);
  }

  private static boolean expiredAt(byte[] value, int offset, long ttlMillis, long now) {
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
