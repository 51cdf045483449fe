package io.cobble.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * What the fixture promises its users: authentication is on (other keys are refused), a restarted
 * server takes the old clients back, a sibling serves the same objects under its own keys, and the
 * secret never shows in {@code toString}.
 */
class S3ProxyServerTest {

  @TempDir Path dir;

  @Test
  void onlyItsOwnKeyPairIsAcceptedAndObjectsLandInTheDirectory() throws Exception {
    try (S3ProxyServer server = S3ProxyServer.start(dir, "bucket");
        S3ProxyServer other = S3ProxyServer.start(dir.resolve("other"), "bucket");
        S3Client client = server.client();
        S3Client wrongKeys = server.client(other.accessKey(), other.secretKey())) {
      client.putObject(x -> x.bucket("bucket").key("k"), RequestBody.fromString("v"));
      assertEquals("v", new String(Files.readAllBytes(dir.resolve("bucket").resolve("k"))));
      S3Exception refused =
          assertThrows(
              S3Exception.class,
              () -> wrongKeys.getObjectAsBytes(x -> x.bucket("bucket").key("k")));
      assertEquals(403, refused.statusCode());
      assertNotEquals(server.secretKey(), other.secretKey());
      assertFalse(server.toString().contains(server.secretKey()));
    }
  }

  @Test
  void aRestartedServerKeepsPortKeysAndObjectsAndASiblingSharesTheObjects() throws Exception {
    S3ProxyServer first = S3ProxyServer.start(dir, "bucket");
    try (S3Client client = first.client()) {
      client.putObject(x -> x.bucket("bucket").key("k"), RequestBody.fromString("v"));
      first.close();
      try (S3ProxyServer again = first.restart();
          S3ProxyServer sibling = again.startSibling();
          S3Client siblingClient = sibling.client()) {
        assertEquals(first.port(), again.port());
        assertEquals("v", client.getObjectAsBytes(x -> x.bucket("bucket").key("k")).asUtf8String());
        assertNotEquals(again.accessKey(), sibling.accessKey());
        assertEquals(
            "v", siblingClient.getObjectAsBytes(x -> x.bucket("bucket").key("k")).asUtf8String());
      }
    }
  }
}
