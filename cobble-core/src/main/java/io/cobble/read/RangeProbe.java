package io.cobble.read;

import io.cobble.Clock;
import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.iterator.KvIterator;
import io.cobble.iterator.RowMergingIterator;
import io.cobble.row.ColumnLayout;
import io.cobble.row.RowState;
import io.cobble.row.ValueLoader;
import io.cobble.util.ByteReader;
import io.cobble.util.Bytes;
import io.cobble.version.Version;
import java.util.function.LongSupplier;

/**
 * Answers whether a key range of one tree holds a live row, as a scan opened at the same moment
 * would see it, without merging every source when it need not.
 *
 * <p>The sources are sought one at a time, newest first. The first in-range row of a source is
 * live, whatever older sources hold, when it has a column written by a plain put that has not
 * expired (an older row cannot undo a newer put) and no newer source has a key at or before it (so
 * no newer source can delete or replace it). Then the older sources are never sought: a range whose
 * rows sit in the memtable or in level 0 is answered there. Every other case (a newer source holds
 * an earlier key, the first row is a tombstone, a merge operand, or a column whose merge operator
 * expires elements) falls back to the full merge, the scan's own path.
 */
public final class RangeProbe {
  private static final ThreadLocal<RangeProbe> PROBES = ThreadLocal.withInitial(RangeProbe::new);

  private final ByteReader reader = new ByteReader();
  // A probe never runs inside another on its thread, so it keeps sources of its own.
  private final ScanSources sources = ScanSources.unpooled();
  private final LongSupplier nowSupplier = this::now;
  private Clock clock;
  // The probe's time, read from the clock at the first row that expires (-1 until then): one time
  // for the whole probe, and no clock read (tens of ns on some VMs) for rows that never expire.
  private long now;

  private RangeProbe() {}

  /**
   * Whether a live row of {@code bucket} has a key in {@code [start, end)} (null = unbounded) in
   * {@code version}, judged at one time of {@code clock}, which is read only if a row found
   * expires. The range's tree keys are built in this thread's buffers.
   */
  public static boolean anyLive(
      Version version,
      ColumnLayout layout,
      ValueLoader loader,
      int bucket,
      byte[] start,
      byte[] end,
      Clock clock) {
    RangeProbe p = PROBES.get();
    ScanBounds bounds = p.sources.bounds();
    byte[] from = start == null ? Bytes.EMPTY : start;
    byte[] lo = bounds.lo(bucket, from, from.length);
    return p.probeAt(version, layout, loader, lo, bounds.hi(bucket, end), clock);
  }

  /**
   * As {@link #anyLive} for the tree keys of {@code bucket} that start with the first {@code
   * prefixLength} bytes of {@code prefix}, with the range built in this thread's buffers.
   */
  public static boolean anyLiveWithPrefix(
      Version version,
      ColumnLayout layout,
      ValueLoader loader,
      int bucket,
      byte[] prefix,
      int prefixLength,
      Clock clock) {
    RangeProbe p = PROBES.get();
    ScanBounds bounds = p.sources.bounds();
    byte[] lo = bounds.lo(bucket, prefix, prefixLength);
    byte[] hi = bounds.hiAfterPrefix(bucket, prefix, prefixLength);
    return p.probeAt(version, layout, loader, lo, hi, clock);
  }

  private boolean probeAt(
      Version version, ColumnLayout layout, ValueLoader loader, byte[] lo, byte[] hi, Clock clock) {
    this.clock = clock;
    now = -1;
    try {
      return probe(version, layout, loader, lo, hi);
    } finally {
      this.clock = null;
    }
  }

  private long now() {
    if (now < 0) {
      now = clock.nowMillis();
    }
    return now;
  }

  private boolean probe(
      Version version, ColumnLayout layout, ValueLoader loader, byte[] lo, byte[] hi) {
    try {
      sources.choose(version, layout, lo, hi);
      int decided = firstSourceDecides(layout, lo, hi);
      if (decided >= 0) {
        return decided == 1;
      }
      RowMergingIterator merged = sources.merge(layout, loader);
      merged.upperBound(hi).seek(lo);
      while (merged.valid()) {
        if (hi != null
            && Bytes.compare(
                    merged.keyArray(), merged.keyOffset(), merged.keyLength(), hi, 0, hi.length)
                >= 0) {
          return false;
        }
        RowState r = merged.row();
        if (r.toUser(null, r.readsClock(null) ? now() : 0L, loader) != null) {
          return true;
        }
        merged.next();
      }
      return false;
    } finally {
      sources.release();
    }
  }

  /** 1 when live, 0 when no source has a key in range, -1 when the full merge must decide. */
  private int firstSourceDecides(ColumnLayout layout, byte[] lo, byte[] hi) {
    for (int i = 0; i < sources.sourceCount(); i++) {
      KvIterator s = sources.source(i);
      s.seek(lo);
      if (!s.valid()
          || (hi != null
              && Bytes.compare(s.keyArray(), s.keyOffset(), s.keyLength(), hi, 0, hi.length)
                  >= 0)) {
        // Nothing of the range in this source: it can neither hold a live row nor hide one.
        continue;
      }
      return putAlive(s, layout) ? 1 : -1;
    }
    return 0;
  }

  private boolean putAlive(KvIterator s, ColumnLayout layout) {
    try {
      return RowState.hasLivePut(
          layout, s.valueArray(), s.valueOffset(), s.valueLength(), reader, nowSupplier);
    } catch (CobbleException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new CorruptionException("<scan source>", "cannot decode row: " + e.getMessage(), e);
    }
  }
}
