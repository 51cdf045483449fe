package io.cobble.flink.table.source;

import io.cobble.reader.Reader;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * The Cobble reader's gauges in a metric group: block cache and row cache hits, misses and bytes
 * used (a reader without a row cache reads 0), open shard snapshots and the global snapshot being
 * read. A gauge reads 0 while no reader is open.
 */
final class ReaderGauges {

  private ReaderGauges() {}

  static void register(MetricGroup group, Supplier<Reader> reader) {
    gauge(group, "blockCacheHits", reader, r -> r.cache().hits());
    gauge(group, "blockCacheMisses", reader, r -> r.cache().misses());
    gauge(group, "blockCacheUsageBytes", reader, r -> r.cache().usage());
    gauge(group, "rowCacheHits", reader, r -> r.rowCache() == null ? 0 : r.rowCache().hits());
    gauge(group, "rowCacheMisses", reader, r -> r.rowCache() == null ? 0 : r.rowCache().misses());
    gauge(
        group, "rowCacheUsageBytes", reader, r -> r.rowCache() == null ? 0 : r.rowCache().usage());
    gauge(group, "openShards", reader, Reader::openShards);
    gauge(group, "globalSnapshotId", reader, r -> r.snapshot().id());
  }

  private static void gauge(
      MetricGroup group, String name, Supplier<Reader> reader, ToLongFunction<Reader> value) {
    group.gauge(
        name,
        (Gauge<Long>)
            () -> {
              Reader r = reader.get();
              return r == null ? 0L : value.applyAsLong(r);
            });
  }
}
