package io.cobble.benchmarks.flinksql;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs each engine in a fresh JVM of its own, pass after pass with the order alternating, and
 * merges the passes' measured runs. In one shared JVM, the JIT compiles Flink's lookup and copy
 * operators for every connector the earlier jobs used, so an engine measured after another pays for
 * code shaped by both (a Cobble hit cost 1,270-1,377 ns of CPU alone in its JVM and 1,557-1,700 ns
 * after Paimon's jobs); a deployment runs one connector. Alternating the forks over passes keeps
 * the machine's drift from favouring the engine that always runs first, which running each engine
 * once in sequence does not.
 *
 * <p>A forked JVM gets this JVM's options and class path and the run's settings with only its
 * engine; it writes its results to a file this JVM reads back (a line per measured run, counter or
 * reason an engine could not run a shape).
 */
final class EngineForks {

  private static final String RUN = "run";
  private static final String COUNTER = "counter";
  private static final String UNAVAILABLE = "unavailable";

  private EngineForks() {}

  /** Runs {@code settings.forks} passes of every engine, each in its own JVM. */
  static Map<Shape, Map<TableEngine, ShapeResult>> run(BenchSettings settings, String[] argv)
      throws IOException, InterruptedException {
    FlinkSqlBenchmark.log(
        "Cobble vs Paimon, Flink SQL on embedded MiniClusters, one JVM per engine");
    FlinkSqlBenchmark.log(FlinkSqlBenchmark.machine() + " (this JVM; each fork prints its own)");
    for (String line : settings.describe()) {
      FlinkSqlBenchmark.log("  " + line);
    }
    Map<Shape, Map<TableEngine, ShapeResult>> results = FlinkSqlBenchmark.emptyResults(settings);
    Files.createDirectories(settings.dir);
    Path resultsFile = Files.createTempFile(settings.dir, "fork-results-", ".tsv");
    try {
      for (int pass = 0; pass < settings.forks; pass++) {
        List<TableEngine> engines = new ArrayList<>(settings.engines);
        if (pass % 2 == 1) {
          Collections.reverse(engines);
        }
        for (TableEngine engine : engines) {
          FlinkSqlBenchmark.log("");
          FlinkSqlBenchmark.log(
              String.format(
                  Locale.ROOT,
                  "=== pass %d of %d: %s in a fresh JVM",
                  pass + 1,
                  settings.forks,
                  engine.label));
          Files.deleteIfExists(resultsFile);
          String failure = runFork(settings, argv, engine, resultsFile);
          if (failure == null) {
            readResults(resultsFile, results);
          } else {
            for (Map<TableEngine, ShapeResult> perEngine : results.values()) {
              perEngine.get(engine).markUnavailable("pass " + (pass + 1) + ": " + failure);
            }
            FlinkSqlBenchmark.log(engine.label + ", pass " + (pass + 1) + ": " + failure);
          }
        }
      }
    } finally {
      Files.deleteIfExists(resultsFile);
    }
    return results;
  }

  /** Runs one engine's fork to its end; returns why it failed, or null when it wrote results. */
  private static String runFork(
      BenchSettings settings, String[] argv, TableEngine engine, Path resultsFile)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(FlinkSqlBenchmark.class.getName());
    for (String arg : argv) {
      if (!arg.startsWith("--forks=") && !arg.startsWith("--engines=")) {
        command.add(arg);
      }
    }
    command.add("--engines=" + engine.option);
    command.add("--results-file=" + resultsFile);
    Process fork = new ProcessBuilder(command).inheritIO().start();
    // Every job of the fork has its own timeout; this bounds a fork that hangs outside a job.
    long jobs = 1 + settings.shapes.size() * (2L + settings.warmups + settings.iterations);
    if (!fork.waitFor(settings.jobTimeoutMinutes * jobs, TimeUnit.MINUTES)) {
      fork.destroyForcibly().waitFor();
      return "its JVM did not finish within " + settings.jobTimeoutMinutes * jobs + " minutes";
    }
    if (fork.exitValue() != 0) {
      return "its JVM exited with code " + fork.exitValue() + " (output above)";
    }
    if (!Files.exists(resultsFile)) {
      return "its JVM ended without writing results";
    }
    return null;
  }

  /** Writes {@code results} for the JVM that forked this one ({@link #readResults}). */
  static void writeResults(Path file, Map<Shape, Map<TableEngine, ShapeResult>> results)
      throws IOException {
    List<String> lines = new ArrayList<>();
    for (Map.Entry<Shape, Map<TableEngine, ShapeResult>> shape : results.entrySet()) {
      for (Map.Entry<TableEngine, ShapeResult> engine : shape.getValue().entrySet()) {
        String prefix = shape.getKey().name() + '\t' + engine.getKey().name() + '\t';
        ShapeResult result = engine.getValue();
        if (!result.isAvailable()) {
          lines.add(
              UNAVAILABLE + '\t' + prefix + result.unavailableReason().replaceAll("\\s+", " "));
          continue;
        }
        for (int run = 0; run < result.runs(); run++) {
          lines.add(
              RUN + '\t' + prefix + result.rowsPerSecond(run) + '\t' + result.cpuNanosPerRow(run));
        }
        for (Map.Entry<String, Long> counter : result.lastCounters().entrySet()) {
          lines.add(COUNTER + '\t' + prefix + counter.getKey() + '\t' + counter.getValue());
        }
      }
    }
    Path partial = file.resolveSibling(file.getFileName() + ".partial");
    Files.write(partial, lines, StandardCharsets.UTF_8);
    Files.move(partial, file);
  }

  /** Adds a fork's results to {@code results}: its runs after those of earlier passes. */
  private static void readResults(Path file, Map<Shape, Map<TableEngine, ShapeResult>> results)
      throws IOException {
    Map<ShapeResult, Map<String, Long>> counters = new LinkedHashMap<>();
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      String[] fields = line.split("\t", 5);
      ShapeResult result =
          results.get(Shape.valueOf(fields[1])).get(TableEngine.valueOf(fields[2]));
      switch (fields[0]) {
        case RUN:
          result.addRun(Double.parseDouble(fields[3]), Double.parseDouble(fields[4]));
          break;
        case COUNTER:
          counters
              .computeIfAbsent(result, r -> new LinkedHashMap<>())
              .put(fields[3], Long.parseLong(fields[4]));
          break;
        case UNAVAILABLE:
          if (result.isAvailable()) {
            result.markUnavailable(fields[3]);
          }
          break;
        default:
          throw new IOException("Unknown line in fork results " + file + ": " + line);
      }
    }
    for (Map.Entry<ShapeResult, Map<String, Long>> entry : counters.entrySet()) {
      entry.getKey().recordCounters(entry.getValue());
    }
  }
}
