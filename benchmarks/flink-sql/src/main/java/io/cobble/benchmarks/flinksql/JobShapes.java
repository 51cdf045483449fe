package io.cobble.benchmarks.flinksql;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

/**
 * The SQL of each shape. Input comes from a number sequence (deterministic, cheap, split across the
 * job's parallelism) mapped to rows by SQL expressions, so both engines receive the same rows.
 *
 * <p>Stored keys are the even numbers {@code 2 * ((s * 2654435761) mod K)}: the multiplier is a
 * prime, so every K consecutive sequence numbers touch each of the K keys once, in scattered order.
 * A probe that must miss asks for the odd number next to a stored key, inside the table's key
 * range, so neither engine can answer it from file key ranges alone.
 */
final class JobShapes {
  private JobShapes() {}

  /** About 100 bytes per row: an 8-byte key, an ~80-character string, an INT and a DOUBLE. */
  static final String COLUMNS =
      "id BIGINT, name STRING, score INT, amount DOUBLE, PRIMARY KEY (id) NOT ENFORCED";

  private static final String WRITE_MULTIPLIER = "2654435761";
  private static final String PROBE_MULTIPLIER = "1000003";
  static final String FILLER = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWX";

  /** Registers {@code upserts}: rows 0..rows-1 of the upsert stream. */
  static void registerUpserts(
      StreamExecutionEnvironment env, StreamTableEnvironment tEnv, long rows) {
    tEnv.createTemporaryView("upserts", tEnv.fromDataStream(env.fromSequence(0, rows - 1)));
  }

  static String upsertInsert(String tableReference, long keys) {
    return "INSERT INTO "
        + tableReference
        + " SELECT 2 * MOD(f0 * "
        + WRITE_MULTIPLIER
        + ", "
        + keys
        + ") AS id, CONCAT('customer-', CAST(f0 AS STRING), '-"
        + FILLER
        + "') AS name, CAST(MOD(f0, 1000) AS INT) AS score, CAST(f0 AS DOUBLE) / 7 AS amount"
        + " FROM upserts";
  }

  /**
   * Registers {@code probes}: {@code count} probe keys with a processing-time attribute, of which
   * {@code hitsPerTen} in ten are stored keys and the rest their odd neighbours.
   */
  static void registerProbes(
      StreamExecutionEnvironment env,
      StreamTableEnvironment tEnv,
      long count,
      long keys,
      int hitsPerTen) {
    tEnv.createTemporaryView(
        "probe_numbers",
        tEnv.fromDataStream(
            env.fromSequence(0, count - 1),
            Schema.newBuilder()
                .column("f0", DataTypes.BIGINT().notNull())
                .columnByExpression("pt", "PROCTIME()")
                .build()));
    tEnv.executeSql(
        "CREATE TEMPORARY VIEW probes AS SELECT 2 * MOD(f0 * "
            + PROBE_MULTIPLIER
            + ", "
            + keys
            + ") + CASE WHEN MOD(f0, 10) < "
            + hitsPerTen
            + " THEN 0 ELSE 1 END AS k, pt FROM probe_numbers");
  }

  /** The lookup join, one output row per probe (a LEFT JOIN keeps the misses). */
  static String lookupSelect(String tableReference) {
    return "SELECT p.k, d.name, d.score, d.amount FROM probes AS p LEFT JOIN "
        + tableReference
        + " FOR SYSTEM_TIME AS OF p.pt AS d ON p.k = d.id";
  }

  static String lookupInsert(StreamTableEnvironment tEnv, String tableReference) {
    tEnv.executeSql(
        "CREATE TEMPORARY TABLE joined (k BIGINT, name STRING, score INT, amount DOUBLE)"
            + " WITH ('connector' = 'blackhole')");
    return "INSERT INTO joined " + lookupSelect(tableReference);
  }
}
