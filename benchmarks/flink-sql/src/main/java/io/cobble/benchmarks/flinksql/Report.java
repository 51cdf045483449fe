package io.cobble.benchmarks.flinksql;

import java.util.Locale;
import java.util.Map;

/** Prints the results as a Markdown table: median rows/s per engine, range, and the ratio. */
final class Report {
  private Report() {}

  static void print(BenchSettings settings, Map<Shape, Map<TableEngine, ShapeResult>> results) {
    FlinkSqlBenchmark.log("");
    FlinkSqlBenchmark.log(
        "Median rows/s over " + settings.iterations + " measured runs (min-max):");
    FlinkSqlBenchmark.log("");
    FlinkSqlBenchmark.log(
        "| Shape | Cobble | Paimon | Cobble / Paimon (medians) | Cobble / Paimon (paired runs) |");
    FlinkSqlBenchmark.log("|---|---|---|---|---|");
    for (Map.Entry<Shape, Map<TableEngine, ShapeResult>> entry : results.entrySet()) {
      ShapeResult cobble = entry.getValue().get(TableEngine.COBBLE);
      ShapeResult paimon = entry.getValue().get(TableEngine.PAIMON);
      FlinkSqlBenchmark.log(
          "| "
              + entry.getKey().label
              + " | "
              + cell(cobble)
              + " | "
              + cell(paimon)
              + " | "
              + ratio(cobble, paimon)
              + " | "
              + pairedRatio(cobble, paimon)
              + " |");
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
        "%,.0f (%,.0f-%,.0f, %d runs)",
        result.median(),
        result.min(),
        result.max(),
        result.runs());
  }

  private static String ratio(ShapeResult cobble, ShapeResult paimon) {
    if (!measured(cobble) || !measured(paimon)) {
      return "-";
    }
    return String.format(Locale.ROOT, "**%.2f×**", cobble.median() / paimon.median());
  }

  private static String pairedRatio(ShapeResult cobble, ShapeResult paimon) {
    if (!measured(cobble) || !measured(paimon)) {
      return "-";
    }
    return String.format(Locale.ROOT, "%.2f×", cobble.medianPairedRatio(paimon));
  }

  private static boolean measured(ShapeResult result) {
    return result != null && result.isAvailable() && result.hasSamples();
  }
}
