package io.cobble.storage.s3;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;

/** A real S3Proxy on 127.0.0.1 (free port) with AWS signature authentication, files in a dir. */
public final class S3ProxyServer implements AutoCloseable {

  public static final String ACCESS_KEY = "cobble-test-access";
  public static final String SECRET_KEY = "Sup3rS3cretValue-do-not-leak-7f3a9";

  private final S3Proxy proxy;
  private final BlobStore blobStore;

  private S3ProxyServer(S3Proxy proxy, BlobStore blobStore) {
    this.proxy = proxy;
    this.blobStore = blobStore;
  }

  public static S3ProxyServer start(Path directory, String... buckets) throws Exception {
    return start(directory, 0, buckets);
  }

  /** Starts on {@code port} (0: a free one), for example to come back where a stopped one was. */
  public static S3ProxyServer start(Path directory, int port, String... buckets) throws Exception {
    Files.createDirectories(directory);
    BlobStore blobStore = new FilesystemNio2BlobStore(directory.toString());
    for (String bucket : buckets) {
      blobStore.createContainer(bucket);
    }
    S3Proxy proxy =
        S3Proxy.builder()
            .blobStore(blobStore)
            .endpoint(URI.create("http://127.0.0.1:" + port))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
            .build();
    proxy.start();
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!"STARTED".equals(proxy.getState())) {
      if (System.nanoTime() > deadline) {
        proxy.stop();
        throw new IllegalStateException("S3Proxy did not start within 20s: " + proxy.getState());
      }
      Thread.sleep(10);
    }
    return new S3ProxyServer(proxy, blobStore);
  }

  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + proxy.getPort());
  }

  /** Options that let the s3 provider reach this server with the test credentials. */
  public Map<String, String> clientOptions() {
    Map<String, String> options = new HashMap<>();
    options.put("endpoint", endpoint().toString());
    options.put("region", "us-east-1");
    options.put("access_key_id", ACCESS_KEY);
    options.put("secret_access_key", SECRET_KEY);
    options.put("enable_virtual_host_style", "false");
    return options;
  }

  /**
   * {@link #clientOptions()} with short timeouts and 2 attempts, so calls to a stopped server fail
   * within seconds.
   */
  public Map<String, String> failFastClientOptions() {
    Map<String, String> options = clientOptions();
    options.put("api_call_timeout", "3s");
    options.put("api_call_attempt_timeout", "1s");
    options.put("max_attempts", "2");
    options.put("connect_timeout", "1s");
    options.put("socket_timeout", "2s");
    return options;
  }

  /** Opens {@code s3://<location>} on this server through the s3 provider. */
  public Storage open(String location) throws IOException {
    return StorageProviders.open(
        URI.create("s3://" + location), StorageOptions.of(clientOptions()));
  }

  BlobStore blobStore() {
    return blobStore;
  }

  @Override
  public void close() throws Exception {
    proxy.stop();
  }
}
