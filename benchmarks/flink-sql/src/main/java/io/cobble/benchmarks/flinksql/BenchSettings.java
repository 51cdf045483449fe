package io.cobble.benchmarks.flinksql;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One run's settings, shared by both engines so that every shape is the same job for each: rows and
 * keys written, probes looked up, bucket count, parallelism, checkpoint interval.
 */
final class BenchSettings {

  final long rows;
  final long keys;
  final long probes;

  /** Probes per warm-up lookup job: enough to compile the hot paths, less than a measured run. */
  final long warmupProbes;

  final int buckets;
  final int parallelism;
  final long checkpointMillis;
  final int warmups;
  final int iterations;
  final List<Shape> shapes;
  final List<TableEngine> engines;
  final Path dir;
  final long jobTimeoutMinutes;

  /**
   * Passes in which every engine runs in a fresh JVM of its own ({@link EngineForks}); 0 runs all
   * engines in this JVM.
   */
  final int forks;

  /** Where a forked run writes its results for the JVM that started it; null when not forked. */
  final Path resultsFile;

  /** Extra WITH entries of every Cobble table, as SQL ({@code , 'k' = 'v'}...); may be empty. */
  final String cobbleOptions;

  /**
   * Of Cobble's lookup memory ({@link TableEngine#LOOKUP_MEMORY_MB}, Paimon's), the megabytes given
   * to the row cache; the rest is the block cache.
   */
  final long rowCacheMb;

  private BenchSettings(Map<String, String> args) {
    rows = positiveLong(args, "rows", 1_000_000L);
    keys = Math.max(1, rows / 10);
    probes = positiveLong(args, "probes", 1_000_000L);
    warmupProbes = positiveLong(args, "warmup-probes", probes);
    buckets = (int) positiveLong(args, "buckets", 4);
    parallelism = (int) positiveLong(args, "parallelism", 2);
    checkpointMillis = positiveLong(args, "checkpoint-ms", 10_000L);
    warmups = (int) nonNegativeLong(args, "warmups", 1);
    iterations = (int) positiveLong(args, "iterations", 3);
    shapes = Shape.parseList(text(args, "shapes", "sink,lookup-hits,lookup-misses"));
    engines =
        TableEngine.parseList(
            text(args, "engines", "cobble,cobble-async,paimon,blackhole").toLowerCase());
    dir = Paths.get(text(args, "dir", "target/bench-data")).toAbsolutePath();
    jobTimeoutMinutes = positiveLong(args, "job-timeout-minutes", 10);
    cobbleOptions = withEntries(text(args, "cobble-options", ""));
    rowCacheMb = nonNegativeLong(args, "row-cache-mb", 0);
    forks = (int) nonNegativeLong(args, "forks", 0);
    String results = text(args, "results-file", null);
    resultsFile = results == null ? null : Paths.get(results).toAbsolutePath();
    if (rowCacheMb >= TableEngine.LOOKUP_MEMORY_MB) {
      throw new IllegalArgumentException(
          "--row-cache-mb must be below the "
              + TableEngine.LOOKUP_MEMORY_MB
              + " MB of lookup memory, got "
              + rowCacheMb
              + ".");
    }
    if (!args.isEmpty()) {
      throw new IllegalArgumentException(
          "Unknown option(s) " + args.keySet() + "; known: " + KNOWN + ".");
    }
  }

  private static final List<String> KNOWN =
      Collections.unmodifiableList(
          Arrays.asList(
              "rows",
              "probes",
              "warmup-probes",
              "buckets",
              "parallelism",
              "checkpoint-ms",
              "warmups",
              "iterations",
              "shapes",
              "engines",
              "dir",
              "job-timeout-minutes",
              "cobble-options",
              "row-cache-mb",
              "forks",
              "results-file"));

  static BenchSettings parse(String[] argv) {
    Map<String, String> args = new HashMap<>();
    for (String arg : argv) {
      int eq = arg.indexOf('=');
      if (!arg.startsWith("--") || eq < 0) {
        throw new IllegalArgumentException(
            "Bad argument '" + arg + "': use --name=value with a name out of " + KNOWN + ".");
      }
      args.put(arg.substring(2, eq), arg.substring(eq + 1));
    }
    return new BenchSettings(args);
  }

  /** {@code k=v;k=v} as WITH entries, each preceded by a comma. */
  private static String withEntries(String text) {
    StringBuilder sql = new StringBuilder();
    for (String entry : text.split(";")) {
      if (entry.trim().isEmpty()) {
        continue;
      }
      int eq = entry.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException(
            "Bad --cobble-options entry '" + entry + "': use key=value;key=value.");
      }
      sql.append(", '")
          .append(entry.substring(0, eq).trim())
          .append("' = '")
          .append(entry.substring(eq + 1).trim())
          .append('\'');
    }
    return sql.toString();
  }

  /** Takes an option out of {@code args}, so that what is left at the end is unknown. */
  private static String text(Map<String, String> args, String name, String fallback) {
    String value = args.remove(name);
    return value == null ? fallback : value;
  }

  private static long positiveLong(Map<String, String> args, String name, long fallback) {
    long value = nonNegativeLong(args, name, fallback);
    if (value == 0) {
      throw new IllegalArgumentException("--" + name + " must be greater than zero.");
    }
    return value;
  }

  private static long nonNegativeLong(Map<String, String> args, String name, long fallback) {
    String text = text(args, name, null);
    if (text == null) {
      return fallback;
    }
    try {
      long value = Long.parseLong(text.replace("_", ""));
      if (value < 0) {
        throw new IllegalArgumentException("--" + name + " must not be negative, got " + text);
      }
      return value;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "--" + name + " must be a whole number, got '" + text + "'");
    }
  }

  List<String> describe() {
    List<String> lines = new ArrayList<>();
    lines.add("rows written per sink job: " + rows + " upserts over " + keys + " keys");
    lines.add("probes per lookup job: " + probes + " (warm-up: " + warmupProbes + ")");
    lines.add("bucket: " + buckets + ", parallelism (job and sink.parallelism): " + parallelism);
    lines.add("checkpoint interval: " + checkpointMillis + " ms");
    lines.add(
        "Cobble lookup memory: block cache "
            + (TableEngine.LOOKUP_MEMORY_MB - rowCacheMb)
            + " MB, row cache "
            + rowCacheMb
            + " MB");
    lines.add("extra Cobble table options: " + (cobbleOptions.isEmpty() ? "none" : cobbleOptions));
    lines.add(
        "warm-up runs: " + warmups + ", measured runs: " + iterations + " per engine and shape");
    if (forks > 0) {
      lines.add(
          forks
              + " passes, each engine in a fresh JVM of its own per pass, the order alternating:"
              + " the warm-up and measured runs above are per pass");
    }
    return lines;
  }

  /** The measured runs per engine and shape over all passes. */
  int measuredRuns() {
    return iterations * Math.max(1, forks);
  }
}
