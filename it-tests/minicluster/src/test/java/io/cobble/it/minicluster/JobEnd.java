package io.cobble.it.minicluster;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.table.api.TableResult;

/**
 * Waits for a job to end. A cancel is acknowledged before the job's tasks stop, and until they do
 * they may still write checkpoints, pins or objects into directories the test is about to inspect
 * or JUnit to delete.
 */
final class JobEnd {
  private JobEnd() {}

  /** Cancels {@code job} and waits until it is globally terminal, failing after a minute. */
  static void cancel(JobClient job) throws Exception {
    job.cancel().get(1, TimeUnit.MINUTES);
    await(job);
  }

  /** Waits until the job behind a query's result (cancelled by closing its rows) has stopped. */
  static void await(TableResult result) throws Exception {
    await(result.getJobClient().orElseThrow(() -> new AssertionError("the query has no job")));
  }

  /**
   * Waits until {@code job} is globally terminal, failing after a minute. Waits on the job's result
   * rather than polling its status: a per-job MiniCluster shuts down as soon as its job ends, and a
   * status request after that fails.
   */
  static void await(JobClient job) throws Exception {
    try {
      job.getJobExecutionResult().handle((result, failure) -> null).get(1, TimeUnit.MINUTES);
    } catch (TimeoutException e) {
      throw new AssertionError("job " + job.getJobID() + " did not end within a minute", e);
    }
  }
}
