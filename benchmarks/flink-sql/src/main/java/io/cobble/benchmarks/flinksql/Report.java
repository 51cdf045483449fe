package io.cobble.benchmarks.flinksql;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Prints the results as Markdown: median rows/s per engine with its range, the Cobble / Paimon
 * ratios (of medians and of paired runs) for sync and async lookups, and for every shape each
 * engine as a fraction of the pipeline limit (blackhole sink, free lookups), per run and as a
 * range.
 */
final class Report {
  private Report() {}

  /** The engines reported as fractions of the pipeline limit. */
  private static final TableEngine[] MEASURED_ENGINES = {
    TableEngine.COBBLE, TableEngine.COBBLE_ASYNC, TableEngine.PAIMON
  };

  static void print(BenchSettings settings, Map<Shape, Map<TableEngine, ShapeResult>> results) {
    FlinkSqlBenchmark.log("");
    FlinkSqlBenchmark.log(
        "Median rows/s over "
            + settings.measuredRuns()
            + " measured runs (min-max; median CPU per row, whole JVM):");
    FlinkSqlBenchmark.log("");
    StringBuilder header = new StringBuilder("| Shape |");
    StringBuilder rule = new StringBuilder("|---|");
    for (TableEngine engine : settings.engines) {
      header.append(' ').append(engine.label).append(" |");
      rule.append("---|");
    }
    FlinkSqlBenchmark.log(header.append(" Ratios |").toString());
    FlinkSqlBenchmark.log(rule.append("---|").toString());
    for (Map.Entry<Shape, Map<TableEngine, ShapeResult>> entry : results.entrySet()) {
      StringBuilder line = new StringBuilder("| ").append(entry.getKey().label).append(" |");
      for (TableEngine engine : settings.engines) {
        line.append(' ').append(cell(entry.getValue().get(engine))).append(" |");
      }
      line.append(' ').append(String.join("; ", ratios(entry.getValue()))).append(" |");
      FlinkSqlBenchmark.log(line.toString());
    }
    for (Map.Entry<Shape, Map<TableEngine, ShapeResult>> entry : results.entrySet()) {
      printLimitFractions(entry.getKey(), entry.getValue());
    }
    for (Map.Entry<Shape, Map<TableEngine, ShapeResult>> entry : results.entrySet()) {
      for (Map.Entry<TableEngine, ShapeResult> engine : entry.getValue().entrySet()) {
        if (!engine.getValue().isAvailable()) {
          FlinkSqlBenchmark.log(
              "- "
                  + entry.getKey().label
                  + ", "
                  + engine.getKey().label
                  + ": "
                  + engine.getValue().unavailableReason());
        }
      }
    }
  }

  private static List<String> ratios(Map<TableEngine, ShapeResult> byEngine) {
    List<String> out = new ArrayList<>();
    ShapeResult paimon = byEngine.get(TableEngine.PAIMON);
    ShapeResult limit = byEngine.get(TableEngine.BLACKHOLE);
    for (TableEngine engine : new TableEngine[] {TableEngine.COBBLE, TableEngine.COBBLE_ASYNC}) {
      ShapeResult cobble = byEngine.get(engine);
      if (measured(cobble) && measured(paimon)) {
        out.add(
            String.format(
                Locale.ROOT,
                "%s / Paimon **%.2f×** (paired %.2f×)",
                engine.label,
                cobble.median() / paimon.median(),
                cobble.medianPairedRatio(paimon)));
      }
    }
    if (measured(limit)) {
      for (TableEngine engine : MEASURED_ENGINES) {
        ShapeResult result = byEngine.get(engine);
        if (measured(result)) {
          ShapeResult fractions = result.pairedRatios(limit);
          out.add(
              String.format(
                  Locale.ROOT,
                  "%s %.0f %% of the limit (%.0f-%.0f %%)",
                  engine.label,
                  100 * fractions.median(),
                  100 * fractions.min(),
                  100 * fractions.max()));
        }
      }
    }
    return out.isEmpty() ? List.of("-") : out;
  }

  /** Each measured run of each engine as a fraction of the limit's run of the same iteration. */
  private static void printLimitFractions(Shape shape, Map<TableEngine, ShapeResult> byEngine) {
    if (!measured(byEngine.get(TableEngine.BLACKHOLE))) {
      return;
    }
    ShapeResult limit = byEngine.get(TableEngine.BLACKHOLE);
    FlinkSqlBenchmark.log("");
    FlinkSqlBenchmark.log(
        shape.label + " runs as a fraction of the pipeline limit's run of the same iteration:");
    for (int run = 0; run < limit.runs(); run++) {
      StringBuilder line =
          new StringBuilder(
              String.format(
                  Locale.ROOT, "- run %d: limit %,.0f rows/s", run + 1, limit.rowsPerSecond(run)));
      for (TableEngine engine : MEASURED_ENGINES) {
        ShapeResult result = byEngine.get(engine);
        if (measured(result) && run < result.runs()) {
          line.append(
              String.format(
                  Locale.ROOT,
                  ", %s %.0f %%",
                  engine.label,
                  100 * result.rowsPerSecond(run) / limit.rowsPerSecond(run)));
        }
      }
      FlinkSqlBenchmark.log(line.toString());
    }
  }

  private static String cell(ShapeResult result) {
    if (result == null) {
      return "not run";
    }
    if (!result.isAvailable()) {
      return "unavailable (below)";
    }
    if (!result.hasSamples()) {
      return "no measured run";
    }
    return String.format(
        Locale.ROOT,
        "%,.0f (%,.0f-%,.0f, %d runs; CPU %,.0f ns/row)",
        result.median(),
        result.min(),
        result.max(),
        result.runs(),
        result.medianCpuNanosPerRow());
  }

  private static boolean measured(ShapeResult result) {
    return result != null && result.isAvailable() && result.hasSamples();
  }
}
