package io.cobble.benchmarks.flinksql;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/** The measured runs of one engine on one shape, or why it could not run. */
final class ShapeResult {

  private final List<Double> rowsPerSecond = new ArrayList<>();
  private final List<Double> cpuNanosPerRow = new ArrayList<>();
  private String unavailable;
  private Map<String, Long> lastCounters = Collections.emptyMap();

  /** A measured run: {@code rows} in {@code millis}, using {@code cpuNanos} of the whole JVM. */
  void add(long rows, long millis, long cpuNanos) {
    addRun(rows * 1000.0 / Math.max(1, millis), (double) cpuNanos / rows);
  }

  /** A measured run as its rows per second and CPU nanoseconds per row. */
  void addRun(double rowsPerSecond, double cpuNanosPerRow) {
    this.rowsPerSecond.add(rowsPerSecond);
    this.cpuNanosPerRow.add(cpuNanosPerRow);
  }

  /** The lookup counters of this engine's latest run of the shape ({@link LookupCounters}). */
  void recordCounters(Map<String, Long> counters) {
    lastCounters = counters;
  }

  Map<String, Long> lastCounters() {
    return lastCounters;
  }

  void markUnavailable(String reason) {
    unavailable = reason;
  }

  boolean isAvailable() {
    return unavailable == null;
  }

  String unavailableReason() {
    return unavailable;
  }

  boolean hasSamples() {
    return !rowsPerSecond.isEmpty();
  }

  double median() {
    return median(rowsPerSecond);
  }

  /** The median CPU nanoseconds per row of the measured runs (whole JVM, planning included). */
  double medianCpuNanosPerRow() {
    return median(cpuNanosPerRow);
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  double min() {
    return Collections.min(rowsPerSecond);
  }

  double max() {
    return Collections.max(rowsPerSecond);
  }

  int runs() {
    return rowsPerSecond.size();
  }

  /**
   * The median over measured runs of this result's rows/s divided by {@code other}'s in the same
   * run. The two engines' runs of one iteration run back to back, so a paired ratio is less
   * sensitive than a ratio of medians to load that drifts during the benchmark.
   */
  double medianPairedRatio(ShapeResult other) {
    return pairedRatios(other).median();
  }

  /** This result's rows/s of each run divided by {@code other}'s in the same run. */
  ShapeResult pairedRatios(ShapeResult other) {
    ShapeResult ratios = new ShapeResult();
    int runs = Math.min(runs(), other.runs());
    for (int run = 0; run < runs; run++) {
      ratios.rowsPerSecond.add(rowsPerSecond.get(run) / other.rowsPerSecond.get(run));
    }
    return ratios;
  }

  /** The rows/s of measured run {@code run} (0-based). */
  double rowsPerSecond(int run) {
    return rowsPerSecond.get(run);
  }

  /** The CPU nanoseconds per row of measured run {@code run} (0-based). */
  double cpuNanosPerRow(int run) {
    return cpuNanosPerRow.get(run);
  }
}
