package io.cobble.benchmarks.flinksql;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.runtime.util.EnvironmentInformation;

/**
 * Cobble vs Apache Paimon (primary-key table) on the same Flink SQL jobs, in one run: a sink of N
 * upserts over N/10 keys, and lookup joins with 90 % hits and with 90 % misses against a table
 * written the same way. A plain measured main rather than JMH: one measurement is a whole Flink job
 * of seconds to minutes, the shapes depend on each other (a lookup needs its table written first),
 * and a shape one engine cannot run yet must be reported, not abort the others.
 *
 * <p>Warm-up runs first, then measured runs, engines alternating which goes first. A shape that
 * fails for an engine is reported with the reason and not retried.
 */
public final class FlinkSqlBenchmark {

  private static final String DIMENSION = "dim";
  private static final int VERIFY_PROBES = 1000;
  // Longer than any dimension write: checkpointing stays on (Paimon's streaming sink requires it).
  private static final long DIMENSION_CHECKPOINT_MILLIS = 3_600_000;

  private final BenchSettings settings;
  private final Path runDir;
  private final Map<Shape, Map<TableEngine, ShapeResult>> results;

  private FlinkSqlBenchmark(BenchSettings settings, Path runDir) {
    this.settings = settings;
    this.runDir = runDir;
    this.results = emptyResults(settings);
  }

  /** A result per shape and engine of {@code settings}, marked where the engine cannot run it. */
  static Map<Shape, Map<TableEngine, ShapeResult>> emptyResults(BenchSettings settings) {
    Map<Shape, Map<TableEngine, ShapeResult>> results = new EnumMap<>(Shape.class);
    for (Shape shape : settings.shapes) {
      Map<TableEngine, ShapeResult> perEngine = new EnumMap<>(TableEngine.class);
      for (TableEngine engine : settings.engines) {
        ShapeResult result = new ShapeResult();
        if (engine.unsupported(shape) != null) {
          result.markUnavailable(engine.unsupported(shape));
        }
        perEngine.put(engine, result);
      }
      results.put(shape, perEngine);
    }
    return results;
  }

  public static void main(String[] args) throws Exception {
    BenchSettings settings;
    try {
      settings = BenchSettings.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    if (settings.forks > 0) {
      Report.print(settings, EngineForks.run(settings, args));
    } else if (settings.resultsFile != null) {
      EngineForks.writeResults(settings.resultsFile, run(settings));
    } else {
      Report.print(settings, run(settings));
    }
  }

  /** Runs every shape of {@code settings} for every engine; its data is deleted at the end. */
  static Map<Shape, Map<TableEngine, ShapeResult>> run(BenchSettings settings) throws IOException {
    Path runDir = settings.dir.resolve("run-" + System.currentTimeMillis());
    Files.createDirectories(runDir);
    printHeader(settings, runDir);
    FlinkSqlBenchmark benchmark = new FlinkSqlBenchmark(settings, runDir);
    try {
      benchmark.run();
    } finally {
      TableEngine.deleteRecursively(runDir);
    }
    return benchmark.results;
  }

  private static void printHeader(BenchSettings settings, Path runDir) {
    log("Cobble vs Paimon, Flink SQL on an embedded MiniCluster");
    log(machine());
    for (String line : settings.describe()) {
      log("  " + line);
    }
    log("  data under " + runDir + " (deleted at the end)");
    log("  Cobble: engine defaults, lookup memory as above");
    log("  Paimon defaults in effect:");
    for (String line : PaimonDefaults.describe()) {
      log("    " + line);
    }
  }

  /** The Flink and Java versions, cores, load average and heap of this JVM. */
  static String machine() {
    return "Flink "
        + EnvironmentInformation.getVersion()
        + ", Java "
        + System.getProperty("java.version")
        + ", "
        + Runtime.getRuntime().availableProcessors()
        + " cores, load average at start "
        + String.format(
            Locale.ROOT,
            "%.2f",
            ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage())
        + ", max heap "
        + Runtime.getRuntime().maxMemory() / (1 << 20)
        + " MB";
  }

  private void run() {
    if (results.containsKey(Shape.SINK)) {
      runSink();
    }
    List<Shape> lookups = new ArrayList<>();
    for (Shape shape : settings.shapes) {
      if (shape.isLookup()) {
        lookups.add(shape);
      }
    }
    if (!lookups.isEmpty()) {
      runLookups(lookups);
    }
  }

  private void runSink() {
    for (int warmup = 0; warmup < settings.warmups; warmup++) {
      for (TableEngine engine : order(warmup)) {
        sinkOnce(engine, "warm-up " + (warmup + 1), "sink_warmup_" + warmup, false);
      }
    }
    for (int run = 0; run < settings.iterations; run++) {
      for (TableEngine engine : order(run)) {
        sinkOnce(engine, "run " + (run + 1), "sink_" + run, true);
      }
    }
  }

  private void sinkOnce(TableEngine engine, String label, String table, boolean measured) {
    ShapeResult result = results.get(Shape.SINK).get(engine);
    if (!result.isAvailable()) {
      return;
    }
    try {
      long cpuBefore = processCpuNanos();
      long millis = writeTable(engine, table);
      long cpuNanos = processCpuNanos() - cpuBefore;
      logRun(Shape.SINK, engine, label, settings.rows, millis);
      log(
          String.format(
              Locale.ROOT,
              "  CPU %,.0f ns per row (whole JVM, planning included)",
              (double) cpuNanos / settings.rows));
      if (measured) {
        result.add(settings.rows, millis, cpuNanos);
      }
    } catch (Exception e) {
      fail(Shape.SINK, engine, result, e);
    } finally {
      TableEngine.deleteRecursively(engine.dataDir(runDir, table));
    }
  }

  /**
   * Writes the upsert stream into a new table; returns the job's run time in milliseconds. The
   * untimed write of the lookups' dimension table takes no periodic checkpoint (only the final one
   * at the end of input, which commits it): every checkpoint flushes the writers, so the files and
   * levels the probes start on, and with them the lookup's cost, would depend on how many
   * checkpoints the machine's load let the write take.
   */
  private long writeTable(TableEngine engine, String table) throws Exception {
    BenchJob job =
        new BenchJob(
            settings,
            table.equals(DIMENSION) ? DIMENSION_CHECKPOINT_MILLIS : settings.checkpointMillis);
    engine.declare(job.tEnv, runDir, table, settings);
    JobShapes.registerUpserts(job.env, job.tEnv, settings.rows);
    return job.runMillis(JobShapes.upsertInsert(engine.reference(table), settings.keys));
  }

  private void runLookups(List<Shape> shapes) {
    for (TableEngine engine : settings.engines) {
      if (!engine.storesRows() || !anyAvailable(shapes, engine)) {
        continue;
      }
      try {
        long millis = writeTable(engine, DIMENSION);
        log(
            engine.label
                + ": dimension table written ("
                + settings.rows
                + " rows, "
                + millis
                + " ms)"
                + shapeOf(engine));
      } catch (Exception e) {
        for (Shape shape : shapes) {
          fail(shape, engine, results.get(shape).get(engine), e);
        }
      }
    }
    for (Shape shape : shapes) {
      for (TableEngine engine : settings.engines) {
        verifyHits(shape, engine);
      }
      for (int warmup = 0; warmup < settings.warmups; warmup++) {
        for (TableEngine engine : order(warmup)) {
          lookupOnce(shape, engine, "warm-up " + (warmup + 1), false);
        }
      }
      for (int run = 0; run < settings.iterations; run++) {
        for (TableEngine engine : order(run)) {
          lookupOnce(shape, engine, "run " + (run + 1), true);
        }
      }
    }
    for (TableEngine engine : settings.engines) {
      TableEngine.deleteRecursively(engine.dataDir(runDir, DIMENSION));
    }
  }

  private boolean anyAvailable(List<Shape> shapes, TableEngine engine) {
    for (Shape shape : shapes) {
      if (results.get(shape).get(engine).isAvailable()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Joins a small probe set and checks the hit count is exact, so that no engine is timed on a join
   * that returns the wrong rows (e.g. a lookup that does not yet see the written snapshot).
   */
  private void verifyHits(Shape shape, TableEngine engine) {
    ShapeResult result = results.get(shape).get(engine);
    if (!result.isAvailable()) {
      return;
    }
    try {
      BenchJob job = new BenchJob(settings);
      engine.declareDimension(job.tEnv, runDir, DIMENSION, settings);
      JobShapes.registerProbes(job.env, job.tEnv, VERIFY_PROBES, settings.keys, shape.hitsPerTen);
      long hits = job.countNonNull(JobShapes.lookupSelect(engine.reference(DIMENSION)), 1);
      long expected = VERIFY_PROBES / 10 * shape.hitsPerTen;
      if (hits != expected) {
        result.markUnavailable(
            "wrong join result: "
                + hits
                + " of "
                + VERIFY_PROBES
                + " probes hit, expected "
                + expected);
        log(shape.label + " " + engine.label + ": " + result.unavailableReason());
      } else {
        log(shape.label + " " + engine.label + ": verified " + hits + " hits of " + VERIFY_PROBES);
      }
    } catch (Exception e) {
      fail(shape, engine, result, e);
    }
  }

  private void lookupOnce(Shape shape, TableEngine engine, String label, boolean measured) {
    ShapeResult result = results.get(shape).get(engine);
    if (!result.isAvailable()) {
      return;
    }
    try {
      long probes = measured ? settings.probes : settings.warmupProbes;
      BenchJob job = new BenchJob(settings);
      engine.declareDimension(job.tEnv, runDir, DIMENSION, settings);
      JobShapes.registerProbes(job.env, job.tEnv, probes, settings.keys, shape.hitsPerTen);
      String startShape = shapeOf(engine);
      LookupCounters.reset();
      long cpuBefore = processCpuNanos();
      long millis = job.runMillis(JobShapes.lookupInsert(job.tEnv, engine.reference(DIMENSION)));
      long cpuNanos = processCpuNanos() - cpuBefore;
      logRun(shape, engine, label, probes, millis);
      log(
          String.format(
              Locale.ROOT,
              "  CPU %,.0f ns per probe (whole JVM, planning included); %s%s",
              (double) cpuNanos / probes,
              LookupCounters.describe(),
              startShape));
      result.recordCounters(LookupCounters.totals());
      if (measured) {
        result.add(probes, millis, cpuNanos);
      }
    } catch (Exception e) {
      fail(shape, engine, result, e);
    }
  }

  /** The files per level the lookups start on ("; table: ..."), or "" for the limit. */
  private String shapeOf(TableEngine engine) {
    String shape = engine.shape(runDir, DIMENSION);
    return shape == null ? "" : "; table: " + shape;
  }

  /**
   * CPU time of the whole JVM: unlike the job's wall time, it hardly moves with the machine's load,
   * so builds can be compared on a machine other processes share.
   */
  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /** The engines in the order of this run: alternating, so neither always runs on a warmer JVM. */
  private List<TableEngine> order(int run) {
    List<TableEngine> engines = new ArrayList<>(settings.engines);
    if (run % 2 == 1) {
      Collections.reverse(engines);
    }
    return engines;
  }

  /**
   * Records why a shape cannot run for an engine; the summary keeps the root cause, the whole stack
   * trace goes to {@code failures.log} beside the run directories.
   */
  private void fail(Shape shape, TableEngine engine, ShapeResult result, Exception e) {
    result.markUnavailable(rootMessage(e));
    log(shape.label + " " + engine.label + " cannot run: " + result.unavailableReason());
    StringWriter trace = new StringWriter();
    e.printStackTrace(new PrintWriter(trace));
    try {
      Files.write(
          settings.dir.resolve("failures.log"),
          (shape.label + " " + engine.label + ":\n" + trace + "\n")
              .getBytes(StandardCharsets.UTF_8),
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException io) {
      log("Cannot append to " + settings.dir.resolve("failures.log") + ": " + io);
    }
  }

  /** The innermost cause's message: what actually went wrong, not the layers it went through. */
  static String rootMessage(Throwable error) {
    Throwable root = error;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getClass().getSimpleName() + ": " + root.getMessage();
  }

  private static void logRun(
      Shape shape, TableEngine engine, String label, long rows, long millis) {
    log(
        String.format(
            Locale.ROOT,
            "%s %s %s: %,d rows in %,d ms = %,.0f rows/s",
            shape.label,
            engine.label,
            label,
            rows,
            millis,
            rows * 1000.0 / Math.max(1, millis)));
  }

  static void log(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
