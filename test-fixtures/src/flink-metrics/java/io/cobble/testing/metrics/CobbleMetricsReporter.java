package io.cobble.testing.metrics;

import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * A Flink metric reporter that keeps every metric of a {@code cobble} group by its identifier, for
 * tests that read Cobble's gauges and counters off a MiniCluster. Kept as source (it needs Flink)
 * and compiled into each test module that uses it; that module lists it as a reporter factory
 * service and names it in {@code metrics.reporter.<name>.factory.class}.
 */
public final class CobbleMetricsReporter implements MetricReporter, MetricReporterFactory {

  /** The metrics reported so far; a test clears it before its job. */
  public static final Map<String, Metric> METRICS = new ConcurrentHashMap<>();

  @Override
  public MetricReporter createMetricReporter(Properties properties) {
    return new CobbleMetricsReporter();
  }

  @Override
  public void open(MetricConfig config) {}

  @Override
  public void close() {}

  @Override
  public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
    String id = group.getMetricIdentifier(name);
    if (id.contains(".cobble.")) {
      METRICS.put(id, metric);
    }
  }

  @Override
  public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {}
}
