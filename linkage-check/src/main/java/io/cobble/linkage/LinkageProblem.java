package io.cobble.linkage;

/** A reference that would fail to link, or link to something else, on one Flink minor. */
final class LinkageProblem implements Comparable<LinkageProblem> {
  private final String module;
  private final FlinkReference reference;
  private final String reason;
  private final String flinkVersion;

  LinkageProblem(String module, FlinkReference reference, String reason, String flinkVersion) {
    this.module = module;
    this.reference = reference;
    this.reason = reason;
    this.flinkVersion = flinkVersion;
  }

  /**
   * {@code cobble-flink-api: io/cobble/flink/X -> org/apache/flink/Y#m()V missing on Flink 2.0.0}.
   */
  @Override
  public String toString() {
    return module
        + ": "
        + reference.from()
        + " -> "
        + reference.target()
        + " "
        + reason
        + " on Flink "
        + flinkVersion;
  }

  @Override
  public int compareTo(LinkageProblem o) {
    return toString().compareTo(o.toString());
  }
}
