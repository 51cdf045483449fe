package io.cobble.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One {@link S3ProxyServer} for all tests of a class, over a fresh temporary directory that is
 * deleted afterwards: {@code @RegisterExtension static final S3ProxyExtension S3 = new
 * S3ProxyExtension("bucket");} then {@code S3.server()}.
 */
public final class S3ProxyExtension implements BeforeAllCallback, AfterAllCallback {

  private final String[] buckets;
  private Path directory;
  private S3ProxyServer server;

  public S3ProxyExtension(String... buckets) {
    this.buckets = buckets.clone();
  }

  public S3ProxyServer server() {
    if (server == null) {
      throw new IllegalStateException("the S3Proxy starts before all tests of the class");
    }
    return server;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    directory = Files.createTempDirectory("s3proxy");
    server = S3ProxyServer.start(directory, buckets);
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    try {
      if (server != null) {
        server.close();
      }
    } finally {
      server = null;
      deleteTree(directory);
    }
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    }
  }
}
