package io.cobble.sst;

/**
 * Whether probing a filter pays, judged from its recent answers. A probe costs a cache miss on the
 * filter's bits and pays only when it rules a key or range out, which saves a table search; a
 * filter asked about keys its table always holds (the bottom level of a state backend, whose keys
 * all have state there) rules out nothing. So after a {@link #WINDOW} of probes none of which ruled
 * out, only one call in {@link #SAMPLE} probes, and the first sampled probe that rules out brings
 * back probing every call.
 *
 * <p>The rule is strict on purpose: an unprobed miss searches the table, and when the table's block
 * is not in memory that is a storage read the filter would have saved. Skipping only after a window
 * with no rejection, and resuming at the first sampled one, bounds those reads to about as many as
 * the misses themselves: when fewer than one call in {@link #WINDOW} misses, or {@link #SAMPLE}
 * misses at each change of the workload. Skipping a probe never changes an answer.
 *
 * <p>Plain fields: an instance shared by threads is updated racily, and a lost count only shifts
 * when the rule switches.
 */
final class FilterUse {
  /** Probes that must all find their key or range possible before probes are skipped. */
  static final int WINDOW = 256;

  /** While skipping, one call in this many still probes, to notice a rejection. */
  static final int SAMPLE = 16;

  private int probes;
  private boolean sampling;
  private int unprobed;

  /** Whether this call should probe the filter; if it does, it reports with {@link #record}. */
  boolean shouldProbe() {
    if (sampling && ++unprobed < SAMPLE) {
      return false;
    }
    unprobed = 0;
    return true;
  }

  /** Records a probe's answer. */
  void record(boolean ruledOut) {
    if (ruledOut) {
      sampling = false;
      probes = 0;
    } else if (!sampling && ++probes >= WINDOW) {
      sampling = true;
      probes = 0;
    }
  }
}
