package io.cobble.flink.table.source;

import io.cobble.flink.table.codec.KeyEncoder;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.BucketRouter;
import io.cobble.flink.table.layout.TableLayout;
import java.io.IOException;
import java.util.Collection;
import java.util.Collections;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;

/**
 * Exact primary-key lookups on a sink table: the probe's key values are encoded as the sink encoded
 * them, routed to their bucket and read with one point read from the table's files (bloom filters
 * make a miss cost no data block). Every lookup subtask of a JVM shares one reader ({@link
 * SharedReaders}); with {@code scan.checkpoint-id = 'latest'} it moves to a new global snapshot at
 * most once per {@code scan.poll-interval-ms}.
 */
public final class CobbleLookupFunction extends LookupFunction {

  private static final long serialVersionUID = 1L;

  private final SourceSettings settings;
  private final RowCodec codec;
  private final KeyEncoder probeKeys;
  private final int buckets;
  private transient SharedReaders.Lease lease;
  private transient Counter hits;
  private transient Counter misses;

  /**
   * @param codec the table's row codec
   * @param probeKeys encodes the primary key from a probe key row (the planner's lookup-key order)
   */
  public CobbleLookupFunction(
      SourceSettings settings, RowCodec codec, KeyEncoder probeKeys, int buckets) {
    this.settings = settings;
    this.codec = codec;
    this.probeKeys = probeKeys;
    this.buckets = buckets;
  }

  @Override
  public void open(FunctionContext context) throws Exception {
    lease = SharedReaders.acquire(settings);
    MetricGroup group = context.getMetricGroup().addGroup("cobble");
    hits = group.counter("lookupHits");
    misses = group.counter("lookupMisses");
    ReaderGauges.register(group, lease::reader);
  }

  @Override
  public Collection<RowData> lookup(RowData keyRow) throws IOException {
    lease.refreshIfDue();
    byte[] key = probeKeys.encode(keyRow);
    byte[][] columns =
        lease.reader().get(BucketRouter.bucketOf(key, buckets), TableLayout.FAMILY, key);
    if (columns == null) {
      misses.inc();
      return Collections.emptyList();
    }
    hits.inc();
    return Collections.singletonList(codec.decode(key, columns));
  }

  @Override
  public void close() throws Exception {
    if (lease != null) {
      lease.close();
      lease = null;
    }
  }
}
