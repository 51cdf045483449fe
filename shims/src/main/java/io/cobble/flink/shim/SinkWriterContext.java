package io.cobble.flink.shim;

import org.apache.flink.metrics.groups.SinkWriterMetricGroup;

/** What a sink writer needs from Flink's writer init context, read the same way on every line. */
public final class SinkWriterContext {

  private final int subtaskIndex;
  private final int parallelism;
  private final SinkWriterMetricGroup metricGroup;

  public SinkWriterContext(int subtaskIndex, int parallelism, SinkWriterMetricGroup metricGroup) {
    this.subtaskIndex = subtaskIndex;
    this.parallelism = parallelism;
    this.metricGroup = metricGroup;
  }

  public int subtaskIndex() {
    return subtaskIndex;
  }

  public int parallelism() {
    return parallelism;
  }

  public SinkWriterMetricGroup metricGroup() {
    return metricGroup;
  }
}
