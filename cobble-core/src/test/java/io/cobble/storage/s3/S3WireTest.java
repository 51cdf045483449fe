package io.cobble.storage.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the s3 provider puts on the wire, seen by a recording HTTP server: the headers that decide
 * whether S3-compatible stores accept a request.
 */
@Timeout(120)
class S3WireTest {

  /** One request as received. Header names lower-cased. */
  static final class Recorded {
    final String method;
    final String path;
    final Map<String, String> headers = new TreeMap<>();

    Recorded(String method, String path) {
      this.method = method;
      this.path = path;
    }
  }

  private HttpServer server;
  private final List<Recorded> requests = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/",
        exchange -> {
          Recorded request =
              new Recorded(exchange.getRequestMethod(), exchange.getRequestURI().toString());
          exchange
              .getRequestHeaders()
              .forEach(
                  (name, values) ->
                      request.headers.put(name.toLowerCase(Locale.ROOT), String.join(",", values)));
          requests.add(request);
          try (InputStream body = exchange.getRequestBody()) {
            body.readAllBytes();
          }
          byte[] response =
              request.path.contains("?delete")
                  ? ("<DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                          + "</DeleteResult>")
                      .getBytes(StandardCharsets.UTF_8)
                  : new byte[0];
          exchange.getResponseHeaders().add("ETag", "\"0\"");
          exchange.sendResponseHeaders(200, response.length == 0 ? -1 : response.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(response);
          }
        });
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  private Storage open() throws IOException {
    return StorageProviders.open(
        URI.create("s3://bucket/base"),
        StorageOptions.of(
            Map.of(
                "endpoint", "http://127.0.0.1:" + server.getAddress().getPort(),
                "access_key_id", "AKIDWIRE",
                "secret_access_key", "wire-secret-value",
                // Bounds against a hang only: a loaded machine may stall a healthy first call
                // (it loads the SDK) for seconds, and a retry would record a second request.
                "api_call_timeout", "60s",
                "api_call_attempt_timeout", "30s")));
  }

  @Test
  void uploadsUsePathStyleAndNoOptionalChecksumHeaders() throws IOException {
    try (Storage storage = open()) {
      storage.publishAtomically("dir/file", new byte[] {1, 2, 3});
    }
    Recorded put = requests.get(0);
    assertEquals("PUT", put.method);
    assertEquals("/bucket/base/dir/file", put.path);
    assertTrue(put.headers.get("host").startsWith("127.0.0.1:"), put.headers.toString());
    for (String name : put.headers.keySet()) {
      assertFalse(name.startsWith("x-amz-checksum-"), put.headers.toString());
      assertFalse(name.equals("x-amz-sdk-checksum-algorithm"), put.headers.toString());
    }
    assertTrue(put.headers.get("authorization").startsWith("AWS4-HMAC-SHA256"));
    assertFalse(put.headers.toString().contains("wire-secret-value"));
  }

  @Test
  void batchDeletesCarryContentMd5ForStoresThatRequireIt() throws IOException {
    try (Storage storage = open()) {
      storage.deleteAll(List.of("a", "b"));
    }
    Recorded delete = requests.get(0);
    assertEquals("POST", delete.method);
    assertTrue(delete.path.startsWith("/bucket?delete"), delete.path);
    assertTrue(delete.headers.containsKey("content-md5"), delete.headers.toString());
  }
}
