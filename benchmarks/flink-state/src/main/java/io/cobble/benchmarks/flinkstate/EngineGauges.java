package io.cobble.benchmarks.flinkstate;

import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;

/**
 * The metric group handed to the Cobble backend under benchmark: it keeps the engine's gauges
 * (files, bytes, memtables, compactions; sub-groups fold into one) so that each iteration can print
 * the state the shard is in. A throughput that drifts over a read-only run can then be matched with
 * a flush or compaction that changed what the reads go through.
 */
final class EngineGauges extends UnregisteredMetricsGroup {
  private final Map<String, Gauge<?>> gauges = new TreeMap<>();

  @Override
  public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
    synchronized (gauges) {
      gauges.put(name, gauge);
    }
    return gauge;
  }

  @Override
  public MetricGroup addGroup(String name) {
    return this;
  }

  @Override
  public MetricGroup addGroup(String key, String value) {
    return this;
  }

  /** Every gauge as {@code name=value}, in name order; "no engine gauges" when none registered. */
  String describe() {
    StringBuilder text = new StringBuilder();
    synchronized (gauges) {
      for (Map.Entry<String, Gauge<?>> g : gauges.entrySet()) {
        text.append(text.length() == 0 ? "" : " ").append(g.getKey()).append('=');
        try {
          text.append(g.getValue().getValue());
        } catch (RuntimeException e) {
          text.append('?');
        }
      }
    }
    return text.length() == 0 ? "no engine gauges" : text.toString();
  }
}
