package io.cobble.storage.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageOutput;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.S3ProxyExtension;
import io.cobble.testing.S3ProxyServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the s3 provider fails: clear messages naming endpoint and bucket, bounded waits, and never a
 * credential in any message, stack trace or {@code toString()}.
 */
@Timeout(60)
class S3StorageFailureTest {

  static final String BUCKET = "cobble-failures";
  static final String WRONG_SECRET = "Wr0ngS3cret-must-not-appear-41c2";

  @RegisterExtension static final S3ProxyExtension S3 = new S3ProxyExtension(BUCKET);

  /**
   * The timeout tests set a socket timeout of minutes beside the 3 s call timeout: a call that is
   * not cut by the call timeout waits for the socket, far beyond this bound, which leaves a loaded
   * machine plenty of room while still telling the two apart.
   */
  static final String SLOW_SOCKET_TIMEOUT = "300s";

  static final long CALL_TIMEOUT_BOUND_MS = 60_000;

  @TempDir Path blobs;

  /** {@code server}'s options, failing within seconds. */
  static Map<String, String> options(S3ProxyServer server) {
    Map<String, String> options = server.failFastClientOptions();
    options.put("max_attempts", "3");
    return options;
  }

  /** The shared server's options, pointed at {@code endpoint}. */
  static Map<String, String> options(URI endpoint) {
    Map<String, String> options = options(S3.server());
    options.put("endpoint", endpoint.toString());
    return options;
  }

  static Storage open(String bucket, Map<String, String> options) throws IOException {
    return StorageProviders.open(
        URI.create("s3://" + bucket + "/prefix"), StorageOptions.of(options));
  }

  /** Everything a user or log could see of a failure: messages, causes, suppressed, frames. */
  static String fullText(Throwable error) {
    StringWriter text = new StringWriter();
    error.printStackTrace(new PrintWriter(text));
    return text.toString();
  }

  static void assertNoSecret(String text) {
    assertFalse(text.contains(S3.server().secretKey()), "secret leaked: " + text);
    assertFalse(text.contains(WRONG_SECRET), "secret leaked: " + text);
  }

  /** Like {@code assertThrows}, but a failure of another type is shown whole, cause included. */
  static AccessDeniedException assertDenied(Executable call) {
    try {
      call.execute();
    } catch (AccessDeniedException denied) {
      return denied;
    } catch (Throwable other) {
      throw new AssertionError("expected AccessDeniedException, got: " + fullText(other), other);
    }
    throw new AssertionError("expected AccessDeniedException, the call succeeded");
  }

  @Test
  void wrongSecretIsAccessDeniedNamingEndpointAndBucketButNotTheSecret() throws IOException {
    Map<String, String> options = options(S3.server().endpoint());
    options.put("secret_access_key", WRONG_SECRET);
    try (Storage storage = open(BUCKET, options)) {
      List<Throwable> failures = new ArrayList<>();
      failures.add(assertDenied(() -> storage.readAll("x")));
      failures.add(assertDenied(() -> storage.list("")));
      failures.add(assertDenied(() -> storage.publishAtomically("m", new byte[] {1})));
      StorageOutput out = storage.create("data.sst");
      out.write(new byte[100]);
      failures.add(assertDenied(out::close));
      for (Throwable failure : failures) {
        String message = failure.getMessage();
        assertTrue(message.contains(S3.server().endpoint().toString()), message);
        assertTrue(message.contains("'" + BUCKET + "'"), message);
        assertTrue(message.contains("secret_access_key"), message);
        assertNoSecret(fullText(failure));
      }
      assertNoSecret(storage.toString());
    }
  }

  /**
   * A store that refuses a request may answer and close the connection before reading its body; a
   * large body then fails to send, and the client sees only a broken connection.
   */
  @Test
  void wrongSecretOnALargeUploadIsAccessDenied() throws IOException {
    Map<String, String> options = options(S3.server().endpoint());
    options.put("secret_access_key", WRONG_SECRET);
    try (Storage storage = open(BUCKET, options)) {
      AccessDeniedException failure =
          assertDenied(() -> storage.publishAtomically("large", new byte[32 << 20]));
      assertTrue(failure.getMessage().contains("secret_access_key"), failure::getMessage);
      assertNoSecret(fullText(failure));
    }
  }

  @Test
  void wrongAccessKeyIsAccessDenied() throws IOException {
    Map<String, String> options = options(S3.server().endpoint());
    options.put("access_key_id", "no-such-key");
    try (Storage storage = open(BUCKET, options)) {
      AccessDeniedException failure = assertDenied(() -> storage.exists("x"));
      assertTrue(
          failure.getMessage().contains(S3.server().endpoint().toString()), failure::getMessage);
      assertNoSecret(fullText(failure));
    }
  }

  @Test
  void missingBucketIsNamed() throws IOException {
    try (Storage storage = open("no-such-bucket", options(S3.server().endpoint()))) {
      IOException failure = assertThrows(IOException.class, () -> storage.readAll("x"));
      assertTrue(
          failure.getMessage().contains("'no-such-bucket' does not exist"), failure::getMessage);
      assertNoSecret(fullText(failure));
    }
  }

  @Test
  void serverStoppedMidWriteFailsWithinTheCallTimeout() throws Exception {
    try (S3ProxyServer doomed = S3ProxyServer.start(blobs.resolve("doomed"), BUCKET)) {
      URI endpoint = doomed.endpoint();
      Map<String, String> options = options(doomed);
      options.put("part_size", "5mb");
      // Only the 3 s call timeout may end the wait; the socket's would take minutes.
      options.put("socket_timeout", SLOW_SOCKET_TIMEOUT);
      try (Storage storage = open(BUCKET, options)) {
        StorageOutput out = storage.create("interrupted.sst");
        byte[] chunk = new byte[1024 * 1024];
        for (int i = 0; i < 6; i++) {
          out.write(chunk); // the first part goes up while the server still runs
        }
        doomed.close();
        long start = System.nanoTime();
        IOException failure =
            assertThrows(
                IOException.class,
                () -> {
                  for (int i = 0; i < 6; i++) {
                    out.write(chunk);
                  }
                  out.close();
                });
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(elapsedMs < CALL_TIMEOUT_BOUND_MS, "took " + elapsedMs + "ms");
        assertTrue(failure.getMessage().contains(endpoint.toString()), failure::getMessage);
        assertNoSecret(fullText(failure));
        assertFalse(fullText(failure).contains(doomed.secretKey()), "secret leaked");
        // The failed upload must not be published by a later close.
        assertThrows(IOException.class, () -> out.write(1));
      }
    }
  }

  @Test
  void unresponsiveEndpointTimesOutInsteadOfHanging() throws Exception {
    // A real TCP server that accepts connections and never answers.
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      List<Socket> accepted = new ArrayList<>();
      Thread acceptor =
          new Thread(
              () -> {
                try {
                  while (true) {
                    Socket socket = silent.accept();
                    synchronized (accepted) {
                      accepted.add(socket);
                    }
                  }
                } catch (IOException closed) {
                  // the test is over
                }
              },
              "silent-endpoint");
      acceptor.setDaemon(true);
      acceptor.start();
      URI endpoint = URI.create("http://127.0.0.1:" + silent.getLocalPort());
      Map<String, String> options = options(endpoint);
      options.put("socket_timeout", SLOW_SOCKET_TIMEOUT); // only the call timeouts may end it
      try (Storage storage = open(BUCKET, options)) {
        long start = System.nanoTime();
        IOException failure = assertThrows(IOException.class, () -> storage.readAll("x"));
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(elapsedMs < CALL_TIMEOUT_BOUND_MS, "took " + elapsedMs + "ms");
        assertTrue(failure.getMessage().contains("timed out"), failure::getMessage);
        assertTrue(failure.getMessage().contains(endpoint.toString()), failure::getMessage);
        assertNoSecret(fullText(failure));
      } finally {
        synchronized (accepted) {
          for (Socket socket : accepted) {
            socket.close();
          }
        }
      }
    }
  }

  @Test
  void unknownOptionKeyListsTheAcceptedKeys() {
    Map<String, String> options = options(S3.server().endpoint());
    options.put("endpoint.url", "http://typo");
    IllegalArgumentException failure =
        assertThrows(IllegalArgumentException.class, () -> open(BUCKET, options));
    String message = failure.getMessage();
    assertTrue(message.contains("'endpoint.url'"), message);
    assertTrue(message.contains("'s3'"), message);
    for (String key : S3Options.KEYS) {
      assertTrue(message.contains(key), message);
    }
    assertNoSecret(fullText(failure));
  }

  @Test
  void ambientCredentialsAreUsedOnlyWhenAskedFor() throws IOException {
    System.setProperty("aws.accessKeyId", S3.server().accessKey());
    System.setProperty("aws.secretAccessKey", S3.server().secretKey());
    try {
      Map<String, String> options = options(S3.server().endpoint());
      options.remove("access_key_id");
      options.remove("secret_access_key");
      IllegalArgumentException failure =
          assertThrows(IllegalArgumentException.class, () -> open(BUCKET, options));
      assertTrue(failure.getMessage().contains("credentials_provider"), failure::getMessage);

      options.put("credentials_provider", "default");
      try (Storage storage = open(BUCKET, options)) {
        storage.publishAtomically("ambient", new byte[] {7});
        assertEquals(1, storage.length("ambient"));
      }
    } finally {
      System.clearProperty("aws.accessKeyId");
      System.clearProperty("aws.secretAccessKey");
    }
  }

  @Test
  void ambientProfileSettingsAreIgnored(@TempDir Path home) throws IOException {
    // Settings in the AWS config file that would break requests to a custom endpoint.
    Path config = home.resolve("config");
    Files.writeString(
        config, "[default]\nuse_dualstack_endpoint = true\nuse_fips_endpoint = true\n");
    System.setProperty("aws.configFile", config.toString());
    try (Storage storage = open(BUCKET, options(S3.server().endpoint()))) {
      storage.publishAtomically("profile-free", new byte[] {1});
      assertEquals(1, storage.length("profile-free"));
    } finally {
      System.clearProperty("aws.configFile");
    }
  }
}
