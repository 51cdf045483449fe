package io.cobble.benchmarks.flinksql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.table.api.ExplainDetail;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sink's pipeline limit pays the shuffle the measured engines pay: its job hands rows from the
 * source to the sink over the same number of hashing edges as Cobble's, not chained in one task.
 */
class PipelineLimitShuffleTest {

  @Test
  void theBlackholeSinkJobShufflesLikeCobbles(@TempDir Path dir) {
    BenchSettings settings =
        BenchSettings.parse(new String[] {"--rows=1000", "--probes=1000", "--dir=" + dir});

    String cobble = executionPlan(TableEngine.COBBLE, settings, dir);
    String blackhole = executionPlan(TableEngine.BLACKHOLE, settings, dir);

    assertTrue(shuffles(cobble) > 0, "Cobble's sink job has no shuffle:\n" + cobble);
    assertEquals(shuffles(cobble), shuffles(blackhole), "hashing edges:\n" + blackhole);
  }

  private static String executionPlan(TableEngine engine, BenchSettings settings, Path dir) {
    BenchJob job = new BenchJob(settings);
    engine.declare(job.tEnv, dir, "t", settings);
    JobShapes.registerUpserts(job.env, job.tEnv, settings.rows);
    return job.tEnv.explainSql(
        JobShapes.upsertInsert(engine.reference("t"), settings.keys),
        ExplainDetail.JSON_EXECUTION_PLAN);
  }

  /** Edges that move rows between tasks by a key: anything but FORWARD and REBALANCE. */
  private static int shuffles(String plan) {
    Matcher m = Pattern.compile("\"ship_strategy\"\\s*:\\s*\"([A-Z_]+)\"").matcher(plan);
    int n = 0;
    while (m.find()) {
      if (!m.group(1).equals("FORWARD") && !m.group(1).equals("REBALANCE")) {
        n++;
      }
    }
    return n;
  }
}
