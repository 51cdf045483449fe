package io.cobble.sst;

/**
 * Whether probing a filter pays, judged from its recent answers. A probe costs a cache miss on the
 * filter's bits and pays only when it rules a key or range out, which saves a table search; a
 * filter asked about keys its table nearly always holds (the bottom level of a state backend, whose
 * keys all have state there, or a lookup table probed with keys it holds) rules out almost nothing.
 * So after a {@link #WINDOW} of probes of which fewer than {@link #MIN_REJECTIONS} ruled out, only
 * one call in {@link #SAMPLE} probes, and probing every call resumes after a window of those
 * samples that ruled out enough. Skipping a probe never changes an answer: "may hold" only costs
 * the search.
 *
 * <p>Plain fields: an instance shared by threads is updated racily, and a lost count only shifts
 * when the rule switches.
 */
final class FilterUse {
  /** Probes judged together. */
  static final int WINDOW = 256;

  /** Probes of a window that must rule out for probing every call to pay. */
  static final int MIN_REJECTIONS = WINDOW / 16;

  /** While probes do not pay, one call in this many still probes, to notice when they do. */
  static final int SAMPLE = 16;

  private int probes;
  private int rejections;
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
      rejections++;
    }
    if (++probes >= WINDOW) {
      sampling = rejections < MIN_REJECTIONS;
      probes = 0;
      rejections = 0;
    }
  }
}
