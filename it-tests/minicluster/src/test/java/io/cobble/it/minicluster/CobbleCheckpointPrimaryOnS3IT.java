package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.testing.S3ProxyExtension;
import io.cobble.testing.S3ProxyServer;
import io.cobble.testing.flink.LoopbackMiniCluster;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * {@code localdir.primary-high-priority=false} with the checkpoint directory on object storage (a
 * real S3Proxy with authentication on 127.0.0.1, behind Flink's {@code flink-s3-fs-hadoop}): the
 * shard's working files and manifests live in {@code shared/cobble-<id>/} on S3, checkpoints copy
 * nothing into {@code shared/}, a job fails and recovers, is cancelled, and a new job restores from
 * its latest retained checkpoint with exact state. No object holds the access key or secret.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class CobbleCheckpointPrimaryOnS3IT {

  @RegisterExtension static final S3ProxyExtension S3 = new S3ProxyExtension("checkpoints");

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  private static final long N = 20_000;

  /** Flink's file systems are process-wide, as a TaskManager initializes them at start. */
  @BeforeAll
  static void configureS3FileSystem() {
    S3ProxyServer s3 = S3.server();
    Map<String, String> conf = new HashMap<>();
    conf.put("s3.endpoint", s3.endpoint().toString());
    conf.put("s3.endpoint.region", "us-east-1");
    conf.put("s3.path.style.access", "true");
    conf.put("s3.access-key", s3.accessKey());
    conf.put("s3.secret-key", s3.secretKey());
    FileSystem.initialize(Configuration.fromMap(conf), null);
  }

  @AfterAll
  static void resetFileSystems() {
    FileSystem.initialize(new Configuration(), null);
  }

  @BeforeEach
  void reset() {
    KeyedStateJob.reset();
  }

  @Test
  void workingFilesOnS3FailRecoverAndRestoreWithExactState() throws Exception {
    String checkpoints = "s3://checkpoints/ckpt";
    Map<String, String> conf = config(checkpoints);
    conf.put("restart-strategy.type", "fixed-delay");
    conf.put("restart-strategy.fixed-delay.attempts", "3");
    conf.put("restart-strategy.fixed-delay.delay", "200 ms");
    KeyedStateJob.failOnce = true;
    KeyedStateJob.holdAfterFailure = true;
    JobClient job = KeyedStateJob.build(conf, 2, N).executeAsync("cobble-primary-on-s3");

    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    while (KeyedStateJob.COMPLETED_AFTER_FAILURE.get() < 2) {
      assertThat(System.nanoTime())
          .as(
              "a failure and two checkpoints after it within 3 minutes (failed: %s, checkpoints"
                  + " after it: %d)",
              KeyedStateJob.FAILED.get(), KeyedStateJob.COMPLETED_AFTER_FAILURE.get())
          .isLessThan(deadline);
      assertThat(job.getJobStatus().get().isGloballyTerminalState())
          .as("the job still runs while it holds its input")
          .isFalse();
      Thread.sleep(20);
    }
    JobEnd.cancel(job);

    String prefix = "ckpt/" + job.getJobID() + "/";
    List<String> keys = objectKeys(prefix);
    List<String> shared =
        keys.stream().filter(k -> k.startsWith(prefix + "shared/")).collect(Collectors.toList());
    assertThat(shared)
        .as("working files in the shard directories on S3")
        .anyMatch(k -> k.matches(".*/shared/cobble-[0-9a-f-]+/data/e[0-9]+-[0-9]+\\.(sst|vlog)"));
    assertThat(shared)
        .as("nothing but shard directories in shared/: checkpoints copied no file there")
        .allMatch(k -> k.startsWith(prefix + "shared/cobble-"));
    long latest =
        keys.stream()
            .filter(k -> k.startsWith(prefix + "chk-") && k.endsWith("/_metadata"))
            .mapToLong(
                k ->
                    Long.parseLong(
                        k.substring((prefix + "chk-").length(), k.indexOf('/', prefix.length()))))
            .max()
            .orElseThrow(() -> new AssertionError("no completed checkpoint on S3: " + keys));
    assertNoCredentialInAnyObject();

    KeyedStateJob.reset();
    Map<String, String> restore = config(checkpoints);
    restore.put("restart-strategy.type", "none");
    KeyedStateJob.restoreFrom(restore, "s3://checkpoints/" + prefix + "chk-" + latest);
    KeyedStateJob.build(restore, 2, N)
        .executeAsync("cobble-primary-on-s3-restore")
        .getJobExecutionResult()
        .get(3, TimeUnit.MINUTES);
    KeyedStateJob.assertExactResults(N);
    assertNoCredentialInAnyObject();
  }

  private static Map<String, String> config(String checkpoints) {
    // Each checkpoint flushes and uploads through S3A: fewer of them keep the test short.
    Map<String, String> conf = KeyedStateJob.config(checkpoints, "500 ms");
    conf.put("state.backend.cobble.localdir.primary-high-priority", "false");
    return conf;
  }

  private static List<String> objectKeys(String prefix) {
    List<String> keys = new ArrayList<>();
    S3.server()
        .client()
        .listObjectsV2Paginator(
            ListObjectsV2Request.builder().bucket("checkpoints").prefix(prefix).build())
        .contents()
        .forEach((S3Object o) -> keys.add(o.key()));
    return keys;
  }

  private static void assertNoCredentialInAnyObject() throws IOException {
    CobbleStateBackendOnS3IT.assertNoCredentialInAnyObject(S3.server());
  }
}
