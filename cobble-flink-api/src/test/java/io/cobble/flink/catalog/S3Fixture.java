package io.cobble.flink.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;

/** A real S3Proxy on 127.0.0.1 with authentication on, its objects as files under a directory. */
final class S3Fixture implements AutoCloseable {

  static final String ACCESS_KEY = "cobble-catalog-access";
  static final String SECRET_KEY = "Catalog-S3cret-never-written-5e7a";
  static final String BUCKET = "lake";

  private final S3Proxy proxy;
  private final Path blobs;

  S3Fixture(Path dir) throws Exception {
    blobs = dir.resolve("blobs");
    Files.createDirectories(blobs);
    BlobStore store = new FilesystemNio2BlobStore(blobs.toString());
    store.createContainer(BUCKET);
    proxy =
        S3Proxy.builder()
            .blobStore(store)
            .endpoint(URI.create("http://127.0.0.1:0"))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
            .build();
    proxy.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!"STARTED".equals(proxy.getState()) && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertEquals("STARTED", proxy.getState());
  }

  String endpoint() {
    return "http://127.0.0.1:" + proxy.getPort();
  }

  /** Where the store keeps its objects: every byte the catalog and its tables wrote. */
  Path blobs() {
    return blobs;
  }

  /** Catalog options in Flink's style, as the spec names them. */
  TreeMap<String, String> catalogOptions() {
    TreeMap<String, String> options = new TreeMap<>();
    options.put("s3.endpoint", endpoint());
    options.put("s3.access-key", ACCESS_KEY);
    options.put("s3.secret-key", SECRET_KEY);
    options.put("storage.option.enable_virtual_host_style", "false");
    options.put("storage.option.region", "us-east-1");
    return options;
  }

  @Override
  public void close() throws Exception {
    proxy.stop();
  }
}
