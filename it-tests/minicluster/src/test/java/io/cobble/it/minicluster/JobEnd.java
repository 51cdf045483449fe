package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.table.api.TableResult;

/**
 * Waits for a job to end. A cancel is acknowledged before the job's tasks stop, and until they do
 * they may still write checkpoints, pins or objects into directories the test is about to inspect
 * or JUnit to delete.
 */
final class JobEnd {
  private static final long LIMIT = TimeUnit.MINUTES.toNanos(1);

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

  /** Waits until {@code job} is globally terminal, failing after a minute. */
  static void await(JobClient job) throws Exception {
    long deadline = System.nanoTime() + LIMIT;
    while (!job.getJobStatus().get(1, TimeUnit.MINUTES).isGloballyTerminalState()) {
      assertThat(System.nanoTime())
          .as("job %s ends within a minute", job.getJobID())
          .isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}
