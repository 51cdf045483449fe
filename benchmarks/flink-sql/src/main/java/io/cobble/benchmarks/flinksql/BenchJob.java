package io.cobble.benchmarks.flinksql;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * One Flink job on its own embedded MiniCluster (started when the job is submitted, stopped when it
 * ends), so no job inherits another's TaskManager memory or background threads. Streaming mode,
 * checkpointing at the run's interval, every endpoint on 127.0.0.1.
 */
final class BenchJob {

  final StreamExecutionEnvironment env;
  final StreamTableEnvironment tEnv;
  private final long timeoutMinutes;

  BenchJob(BenchSettings settings) {
    this(settings, settings.checkpointMillis);
  }

  BenchJob(BenchSettings settings, long checkpointMillis) {
    Configuration conf = new Configuration();
    for (String key :
        Arrays.asList(
            "rest.address",
            "rest.bind-address",
            "jobmanager.rpc.address",
            "jobmanager.bind-host",
            "taskmanager.host",
            "taskmanager.bind-host")) {
      conf.setString(key, "127.0.0.1");
    }
    conf.set(RestOptions.BIND_PORT, "0");
    // Hadoop is on the classpath for Paimon only; nothing here needs Kerberos tokens.
    conf.setString("security.delegation.tokens.enabled", "false");
    conf.set(TaskManagerOptions.NUM_TASK_SLOTS, settings.parallelism);
    // With checkpointing on, Flink would restart a failing job forever; fail it and report why.
    conf.setString("restart-strategy.type", "none");
    LookupCounters.install(conf);
    env = StreamExecutionEnvironment.createLocalEnvironment(settings.parallelism, conf);
    env.enableCheckpointing(checkpointMillis);
    tEnv = StreamTableEnvironment.create(env);
    timeoutMinutes = settings.jobTimeoutMinutes;
  }

  /**
   * Runs an {@code INSERT} to its end and returns the job's own run time in milliseconds: from its
   * submission to the cluster until it finished, which includes the sink's final commit and
   * excludes SQL planning on the client.
   */
  long runMillis(String insert) throws Exception {
    TableResult result = tEnv.executeSql(insert);
    JobClient client =
        result
            .getJobClient()
            .orElseThrow(() -> new IllegalStateException("No job was submitted for " + insert));
    try {
      JobExecutionResult done =
          client.getJobExecutionResult().get(timeoutMinutes, TimeUnit.MINUTES);
      return done.getNetRuntime();
    } catch (TimeoutException e) {
      client.cancel().get(1, TimeUnit.MINUTES);
      throw new IllegalStateException(
          "The job did not finish within "
              + timeoutMinutes
              + " minutes (--job-timeout-minutes) and was cancelled.",
          e);
    }
  }

  /** Runs a bounded query and counts its rows whose column {@code column} is not NULL. */
  long countNonNull(String select, int column) throws Exception {
    long count = 0;
    try (CloseableIterator<Row> rows = tEnv.executeSql(select).collect()) {
      while (rows.hasNext()) {
        if (rows.next().getField(column) != null) {
          count++;
        }
      }
    }
    return count;
  }
}
