package io.cobble.benchmarks.flinksql;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.config.ExecutionConfigOptions;

/**
 * The two table engines under test. Each declares the same columns, primary key, bucket count and
 * sink parallelism; everything else stays at the engine's defaults, because that is what a user
 * gets.
 */
enum TableEngine {
  COBBLE("Cobble", "cobble") {
    @Override
    void declare(TableEnvironment tEnv, Path runDir, String table, BenchSettings settings) {
      declareCobble(tEnv, dataDir(runDir, table), table, settings, "");
    }

    @Override
    String reference(String table) {
      return table;
    }

    @Override
    Path dataDir(Path runDir, String table) {
      return runDir.resolve("cobble").resolve(table);
    }
  },

  /** Cobble with async lookups ({@code lookup.async}); its sink is Cobble's, so not run twice. */
  COBBLE_ASYNC("Cobble async", "cobble-async") {
    @Override
    void declare(TableEnvironment tEnv, Path runDir, String table, BenchSettings settings) {
      declareCobble(tEnv, dataDir(runDir, table), table, settings, ", 'lookup.async' = 'true'");
    }

    @Override
    String reference(String table) {
      return table;
    }

    @Override
    Path dataDir(Path runDir, String table) {
      return runDir.resolve("cobble-async").resolve(table);
    }

    @Override
    String unsupported(Shape shape) {
      return shape == Shape.SINK
          ? "the sink is Cobble's (lookup.async changes lookups only)"
          : null;
    }
  },

  /**
   * The pipeline's limit: the sink job into Flink's {@code blackhole} connector, which drops every
   * row, and the lookup jobs against a {@link FreeLookupTable}, whose lookups cost nothing. What it
   * costs is the source, the SQL, the shuffle or the lookup-join operator, and the sink on their
   * own; the engines' rows/s are reported as fractions of it. The sink job hashes rows by key to
   * the sink as Cobble's and Paimon's bucket shuffles do: chained to the source, the blackhole
   * would skip the serialization of every row that both engines pay.
   */
  BLACKHOLE("Pipeline limit", "blackhole") {
    @Override
    void declare(TableEnvironment tEnv, Path runDir, String table, BenchSettings settings) {
      tEnv.getConfig()
          .set(
              ExecutionConfigOptions.TABLE_EXEC_SINK_KEYED_SHUFFLE,
              ExecutionConfigOptions.SinkKeyedShuffle.FORCE);
      tEnv.executeSql(
          "CREATE TEMPORARY TABLE "
              + table
              + " ("
              + JobShapes.COLUMNS
              + ") WITH ('connector' = 'blackhole')");
    }

    @Override
    void declareDimension(
        TableEnvironment tEnv, Path runDir, String table, BenchSettings settings) {
      tEnv.executeSql(
          "CREATE TEMPORARY TABLE "
              + table
              + " ("
              + JobShapes.COLUMNS
              + ") WITH ('connector' = '"
              + FreeLookupTable.IDENTIFIER
              + "')");
    }

    @Override
    boolean storesRows() {
      return false;
    }

    @Override
    String reference(String table) {
      return table;
    }

    @Override
    Path dataDir(Path runDir, String table) {
      return runDir.resolve("blackhole").resolve(table);
    }
  },

  PAIMON("Paimon", "paimon") {
    @Override
    void declare(TableEnvironment tEnv, Path runDir, String table, BenchSettings settings) {
      tEnv.executeSql(
          "CREATE CATALOG paimon WITH ('type' = 'paimon', 'warehouse' = '"
              + runDir.resolve("paimon").toUri()
              + "')");
      tEnv.executeSql("CREATE DATABASE IF NOT EXISTS paimon.bench");
      tEnv.executeSql(
          "CREATE TABLE IF NOT EXISTS "
              + reference(table)
              + " ("
              + JobShapes.COLUMNS
              + ") WITH ('bucket' = '"
              + settings.buckets
              + "', 'sink.parallelism' = '"
              + settings.parallelism
              + "')");
    }

    @Override
    String reference(String table) {
      return "paimon.bench." + table;
    }

    @Override
    Path dataDir(Path runDir, String table) {
      return runDir.resolve("paimon").resolve("bench.db").resolve(table);
    }

    @Override
    String shape(Path runDir, String table) {
      return PaimonTableShape.describe(runDir.resolve("paimon"), "bench", table);
    }
  };

  /**
   * Cobble's lookup memory (block cache and row cache together), set to Paimon's default lookup
   * memory cache (lookup.cache-max-memory-size) so both lookups get the same memory.
   */
  static final long LOOKUP_MEMORY_MB = 256;

  final String label;

  /** How {@code --engines} names this engine. */
  final String option;

  TableEngine(String label, String option) {
    this.label = label;
    this.option = option;
  }

  /** Makes {@code table} usable in this table environment, creating it if it does not exist. */
  abstract void declare(TableEnvironment tEnv, Path runDir, String table, BenchSettings settings);

  private static void declareCobble(
      TableEnvironment tEnv, Path dir, String table, BenchSettings settings, String options) {
    tEnv.executeSql(
        "CREATE TEMPORARY TABLE "
            + table
            + " ("
            + JobShapes.COLUMNS
            + ") WITH ('connector' = 'cobble', 'path' = '"
            + dir.toUri()
            + "', 'bucket' = '"
            + settings.buckets
            + "', 'sink.parallelism' = '"
            + settings.parallelism
            + "', 'source.kind' = 'sink', 'source.block-cache-memory' = '"
            + (LOOKUP_MEMORY_MB - settings.rowCacheMb)
            + "mb', 'source.row-cache-memory' = '"
            + settings.rowCacheMb
            + "mb'"
            + settings.cobbleOptions
            + options
            + ")");
  }

  /**
   * Makes the lookup shapes' dimension table {@code table} usable, after it was written (when
   * {@link #storesRows}) through {@link #declare}.
   */
  void declareDimension(TableEnvironment tEnv, Path runDir, String table, BenchSettings settings) {
    declare(tEnv, runDir, table, settings);
  }

  /** Whether the lookup shapes need the dimension table written first. */
  boolean storesRows() {
    return true;
  }

  /** Why this engine does not run {@code shape}, or null when it does. */
  String unsupported(Shape shape) {
    return null;
  }

  /** How SQL names the table after {@link #declare}. */
  abstract String reference(String table);

  /**
   * Where the table's files are; deleting it drops the table (Paimon's filesystem catalog keeps
   * nothing elsewhere), so that runs do not fill the disk.
   */
  abstract Path dataDir(Path runDir, String table);

  /**
   * The files per level of a written table, as its lookups start on it (a Cobble table's unless
   * overridden); null for an engine that stores no rows.
   */
  String shape(Path runDir, String table) {
    return storesRows() ? CobbleTableShape.describe(dataDir(runDir, table)) : null;
  }

  static List<TableEngine> parseList(String text) {
    List<TableEngine> engines = new ArrayList<>();
    for (String name : text.split(",")) {
      engines.add(parse(name.trim()));
    }
    return engines;
  }

  private static TableEngine parse(String option) {
    for (TableEngine engine : values()) {
      if (engine.option.equals(option)) {
        return engine;
      }
    }
    throw new IllegalArgumentException(
        "Unknown engine '"
            + option
            + "' in --engines; use cobble, cobble-async, paimon and/or blackhole.");
  }

  static void deleteRecursively(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(path);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot delete benchmark data under " + root, e);
    }
  }
}
