package io.cobble.it.minicluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.cobble.testing.S3ProxyExtension;
import io.cobble.testing.S3ProxyServer;
import io.cobble.testing.flink.LoopbackMiniCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
 * The Cobble state backend with its checkpoint directory on object storage: a real S3Proxy
 * (authentication on, 127.0.0.1) behind Flink's own S3 file system ({@code flink-s3-fs-hadoop}, the
 * file system a cluster uses for {@code s3://} checkpoints, configured by the cluster's {@code
 * s3.*} keys). A job checkpoints to {@code s3://}, fails, recovers from its latest checkpoint
 * there, checkpoints again and is cancelled; a new job restores from the checkpoint retained on S3
 * and ends with exact state. No object holds the access key or the secret.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class CobbleStateBackendOnS3IT {

  @RegisterExtension static final S3ProxyExtension S3 = new S3ProxyExtension("checkpoints");

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  private static final long N = 20_000;

  /**
   * Flink's file systems are process-wide: the MiniCluster's TaskManager uses what is initialized
   * here, as a TaskManager initializes them from its configuration at start.
   */
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
  void checkpointsOnS3FailRecoverAndRestoreWithExactStateAndNoCredentialInAnyObject()
      throws Exception {
    String checkpoints = "s3://checkpoints/ckpt";
    Map<String, String> conf = KeyedStateJob.config(checkpoints, "100 ms");
    conf.put("restart-strategy.type", "fixed-delay");
    conf.put("restart-strategy.fixed-delay.attempts", "3");
    conf.put("restart-strategy.fixed-delay.delay", "200 ms");
    KeyedStateJob.failOnce = true;
    KeyedStateJob.holdAfterFailure = true;
    JobClient job = KeyedStateJob.build(conf, 2, N).executeAsync("cobble-state-on-s3");

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
    assertThat(KeyedStateJob.RESULTS).as("the job was cancelled before its end").isEmpty();

    String prefix = "ckpt/" + job.getJobID() + "/";
    List<String> keys = objectKeys(prefix);
    assertThat(keys)
        .as("the backend's files went to the shared directory on S3")
        .anyMatch(k -> k.startsWith(prefix + "shared/"));
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
    Map<String, String> restore = KeyedStateJob.config(checkpoints, "100 ms");
    restore.put("restart-strategy.type", "none");
    KeyedStateJob.restoreFrom(restore, "s3://checkpoints/" + prefix + "chk-" + latest);
    KeyedStateJob.build(restore, 2, N)
        .executeAsync("cobble-state-on-s3-restore")
        .getJobExecutionResult()
        .get(3, TimeUnit.MINUTES);
    KeyedStateJob.assertExactResults(N);
    assertNoCredentialInAnyObject();
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
    assertNoCredentialInAnyObject(S3.server());
  }

  /**
   * Every object {@code s3} stores (and S3Proxy's side files), byte for byte. Flink discards
   * subsumed checkpoints asynchronously, so files and directories may vanish while they are listed.
   */
  static void assertNoCredentialInAnyObject(S3ProxyServer s3) throws IOException {
    byte[][] secrets = {
      s3.accessKey().getBytes(StandardCharsets.UTF_8),
      s3.secretKey().getBytes(StandardCharsets.UTF_8)
    };
    List<Path> files = new ArrayList<>();
    Files.walkFileTree(
        s3.directory(),
        new SimpleFileVisitor<Path>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
            if (attributes.isRegularFile()) {
              files.add(file);
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            if (e instanceof NoSuchFileException) {
              return FileVisitResult.CONTINUE;
            }
            throw e;
          }
        });
    assertThat(files).as("objects on S3").isNotEmpty();
    for (Path file : files) {
      byte[] bytes;
      try {
        bytes = Files.readAllBytes(file);
      } catch (NoSuchFileException e) {
        continue; // Discarded meanwhile by Flink's asynchronous checkpoint cleanup.
      }
      for (byte[] secret : secrets) {
        assertThat(indexOf(bytes, secret)).as("a credential in %s", file).isEqualTo(-1);
      }
    }
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
