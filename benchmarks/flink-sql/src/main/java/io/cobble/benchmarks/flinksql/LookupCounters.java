package io.cobble.benchmarks.flinksql;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * Collects the lookup function's counters of the jobs of this JVM through a metric reporter, so
 * that each lookup run can print how many probes hit and missed, and, for async lookups, how many
 * were answered on the task thread and how many were handed to the pool. The counters stay readable
 * after their job ended; each job starts a fresh collection ({@link #reset()}).
 */
public final class LookupCounters implements MetricReporter {
  static final String[] NAMES = {
    "lookupHits", "lookupMisses", "lookupsAnsweredInline", "lookupsHandedOff"
  };

  private static final List<Counter>[] COUNTERS = newLists();

  /**
   * The shared reader's block-cache misses: each is a block read from storage, except on the async
   * path, where a memory-only attempt that finds its block uncached counts one too before the probe
   * is handed off. Every lookup subtask of the JVM reports the same reader, and the gauge reads 0
   * once the reader closed, so the largest value sampled while the job ran stands for the job (a
   * lower bound: the last interval is not seen).
   */
  private static final String CACHE_MISSES = "blockCacheMisses";

  private static final List<Gauge<?>> CACHE_MISS_GAUGES = new ArrayList<>();
  private static long cacheMisses;
  private static Thread sampler;

  @SuppressWarnings("unchecked")
  private static List<Counter>[] newLists() {
    List<Counter>[] lists = new List[NAMES.length];
    for (int i = 0; i < lists.length; i++) {
      lists[i] = new ArrayList<>();
    }
    return lists;
  }

  /** Registers this reporter on a MiniCluster's configuration. */
  static void install(Configuration conf) {
    conf.setString("metrics.reporter.lookupcounters.factory.class", Factory.class.getName());
  }

  /** Starts a fresh collection for the next job, sampling the block-cache misses meanwhile. */
  static synchronized void reset() {
    for (List<Counter> list : COUNTERS) {
      list.clear();
    }
    CACHE_MISS_GAUGES.clear();
    cacheMisses = 0;
    sampler = new Thread(LookupCounters::sampleUntilInterrupted, "lookup-counters-sampler");
    sampler.setDaemon(true);
    sampler.start();
  }

  private static void sampleUntilInterrupted() {
    try {
      while (true) {
        sampleCacheMisses();
        Thread.sleep(50);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static synchronized void sampleCacheMisses() {
    for (Gauge<?> g : CACHE_MISS_GAUGES) {
      Object value = g.getValue();
      if (value instanceof Number) {
        cacheMisses = Math.max(cacheMisses, ((Number) value).longValue());
      }
    }
  }

  private static void stopSampler() throws InterruptedException {
    Thread t;
    synchronized (LookupCounters.class) {
      t = sampler;
      sampler = null;
    }
    if (t != null) {
      t.interrupt();
      t.join();
    }
  }

  /**
   * Stops sampling and describes the counters of the jobs since {@link #reset()} (see {@link
   * #totals()}) and the block reads from storage.
   */
  static String describe() throws InterruptedException {
    stopSampler();
    synchronized (LookupCounters.class) {
      return describeCollected();
    }
  }

  /**
   * The counters of the jobs since {@link #reset()}, summed over subtasks, in {@link #NAMES} order;
   * counters no job registered are left out.
   */
  static synchronized Map<String, Long> totals() {
    Map<String, Long> totals = new LinkedHashMap<>();
    for (int i = 0; i < NAMES.length; i++) {
      if (COUNTERS[i].isEmpty()) {
        continue;
      }
      long sum = 0;
      for (Counter c : COUNTERS[i]) {
        sum += c.getCount();
      }
      totals.put(NAMES[i], sum);
    }
    return totals;
  }

  private static String describeCollected() {
    StringBuilder text = new StringBuilder();
    for (Map.Entry<String, Long> total : totals().entrySet()) {
      text.append(text.length() == 0 ? "" : ", ")
          .append(String.format(Locale.ROOT, "%s %,d", total.getKey(), total.getValue()));
    }
    if (!CACHE_MISS_GAUGES.isEmpty()) {
      text.append(String.format(Locale.ROOT, ", block-cache misses >= %,d", cacheMisses));
    }
    return text.length() == 0 ? "no lookup counters" : text.toString();
  }

  @Override
  public void open(MetricConfig config) {}

  @Override
  public void close() {}

  @Override
  public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
    if (metric instanceof Gauge && CACHE_MISSES.equals(name)) {
      synchronized (LookupCounters.class) {
        CACHE_MISS_GAUGES.add((Gauge<?>) metric);
      }
      return;
    }
    if (!(metric instanceof Counter)) {
      return;
    }
    for (int i = 0; i < NAMES.length; i++) {
      if (NAMES[i].equals(name)) {
        synchronized (LookupCounters.class) {
          COUNTERS[i].add((Counter) metric);
        }
      }
    }
  }

  @Override
  public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {}

  /** Flink instantiates reporters through a factory named in the configuration. */
  public static final class Factory implements MetricReporterFactory {
    @Override
    public MetricReporter createMetricReporter(Properties properties) {
      return new LookupCounters();
    }
  }
}
