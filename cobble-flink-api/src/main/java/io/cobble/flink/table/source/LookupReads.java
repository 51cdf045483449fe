package io.cobble.flink.table.source;

import io.cobble.flink.table.codec.KeyEncoder;
import io.cobble.flink.table.codec.ProjectedRowDecoder;
import io.cobble.flink.table.codec.RowProjection;
import io.cobble.flink.table.layout.BucketRouter;
import io.cobble.flink.table.layout.TableLayout;
import java.io.IOException;
import java.io.Serializable;
import java.util.Collection;
import java.util.Collections;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.ThreadSafeSimpleCounter;
import org.apache.flink.table.data.RowData;

/**
 * The point reads behind both lookup functions: the probe's key values are encoded as the sink
 * encoded them, routed to their bucket and read with one point read of only the projected Cobble
 * columns (bloom filters make a miss cost no data block). Every lookup subtask of a JVM shares one
 * reader ({@link SharedReaders}); with {@code scan.checkpoint-id = 'latest'} it moves to a new
 * global snapshot at most once per {@code scan.poll-interval-ms}. Safe to call from several threads
 * (the async function reads on a pool), each with its own {@link ProbeKeyBuffer}. A hit's values
 * are decoded straight from where they are stored into the returned row ({@link
 * ProjectedRowDecoder}): a lookup's own allocations are that row, a miss allocates nothing.
 */
final class LookupReads implements Serializable {

  private static final long serialVersionUID = 1L;

  private final SourceSettings settings;
  private final RowProjection projection;
  private final KeyEncoder probeKeys;
  private final int[] probePositions;
  private final int buckets;
  private final int[] columns;
  private transient SharedReaders.Lease lease;
  private transient Counter hits;
  private transient Counter misses;

  /**
   * @param probePositions the position of each primary-key part (table key order) in a probe key
   *     row (the planner's lookup-key order)
   */
  LookupReads(
      SourceSettings settings, RowProjection projection, int[] probePositions, int buckets) {
    this.settings = settings;
    this.projection = projection;
    this.probeKeys = new KeyEncoder(projection.keyTypes(), probePositions);
    this.probePositions = probePositions.clone();
    this.buckets = buckets;
    this.columns = projection.cobbleColumns();
  }

  /**
   * @param concurrent whether lookups run on several threads at once (the async function's pool);
   *     otherwise the counters are plain fields, as only the task thread looks up
   */
  void open(MetricGroup functionGroup, boolean concurrent) throws IOException {
    lease = SharedReaders.acquire(settings);
    MetricGroup group = functionGroup.addGroup("cobble");
    hits =
        group.counter(
            "lookupHits", concurrent ? new ThreadSafeSimpleCounter() : new SimpleCounter());
    misses =
        group.counter(
            "lookupMisses", concurrent ? new ThreadSafeSimpleCounter() : new SimpleCounter());
    ReaderGauges.register(group, lease::reader);
  }

  /**
   * The probe's row, or none.
   *
   * @param keyBuffer the calling thread's own key buffer
   */
  Collection<RowData> lookup(RowData keyRow, ProbeKeyBuffer keyBuffer) {
    lease.refreshIfDue();
    byte[] key = keyBuffer.encode(probeKeys, keyRow);
    ProjectedRowDecoder rows = keyBuffer.rows(projection);
    rows.start();
    boolean found =
        lease
            .reader()
            .readColumns(
                BucketRouter.bucketOf(key, buckets), TableLayout.FAMILY, key, columns, rows);
    return answer(keyRow, key, found, rows);
  }

  private Collection<RowData> answer(
      RowData keyRow, byte[] key, boolean found, ProjectedRowDecoder rows) {
    if (!found) {
      misses.inc();
      return Collections.emptyList();
    }
    hits.inc();
    return Collections.singletonList(rows.finish(keyRow, probePositions, key));
  }

  /**
   * As {@link #lookup}, answered only from memory (pinned or cached blocks): null when the answer
   * needs a storage read, or when a poll for a new snapshot is due (which reads storage too).
   */
  Collection<RowData> lookupInMemory(RowData keyRow, ProbeKeyBuffer keyBuffer) {
    if (lease.refreshDue()) {
      return null;
    }
    byte[] key = keyBuffer.encode(probeKeys, keyRow);
    ProjectedRowDecoder rows = keyBuffer.rows(projection);
    rows.start();
    Boolean found =
        lease
            .reader()
            .readColumnsInMemory(
                BucketRouter.bucketOf(key, buckets), TableLayout.FAMILY, key, columns, rows);
    if (found == null) {
      return null;
    }
    return answer(keyRow, key, found, rows);
  }

  void close() throws IOException {
    if (lease != null) {
      lease.close();
      lease = null;
    }
  }
}
