package io.cobble.it.minicluster;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.LinkedHashMap;
import java.util.Map;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;

/**
 * A real S3Proxy in the test JVM on 127.0.0.1 (free port) with AWS V4 signature authentication and
 * a random key pair, over a filesystem blob store; {@link #storageOptions()} are the {@code
 * storage.option.*} a Cobble table on it needs.
 */
final class S3ProxyServer implements AutoCloseable {

  private static final SecureRandom RANDOM = new SecureRandom();

  private final S3Proxy proxy;
  private final String accessKey;
  private final String secretKey;

  private S3ProxyServer(S3Proxy proxy, String accessKey, String secretKey) {
    this.proxy = proxy;
    this.accessKey = accessKey;
    this.secretKey = secretKey;
  }

  /** Starts a server whose objects live in {@code directory}, with the given buckets. */
  static S3ProxyServer start(Path directory, String... buckets) throws Exception {
    Files.createDirectories(directory);
    BlobStore store = new FilesystemNio2BlobStore(directory.toString());
    for (String bucket : buckets) {
      store.createContainer(bucket);
    }
    String accessKey = "AK" + randomHex(9);
    String secretKey = randomHex(20);
    S3Proxy proxy =
        S3Proxy.builder()
            .blobStore(store)
            .endpoint(URI.create("http://127.0.0.1:0"))
            .awsAuthentication(AuthenticationType.AWS_V4, accessKey, secretKey)
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
    return new S3ProxyServer(proxy, accessKey, secretKey);
  }

  /** The provider options of a Cobble table on this server (without the prefix). */
  Map<String, String> storageOptions() {
    Map<String, String> options = new LinkedHashMap<>();
    options.put("endpoint", "http://127.0.0.1:" + proxy.getPort());
    options.put("region", "us-east-1");
    options.put("access_key_id", accessKey);
    options.put("secret_access_key", secretKey);
    options.put("enable_virtual_host_style", "false");
    return options;
  }

  /** The same options as {@code , 'storage.option.<key>' = '<value>'} for a DDL. */
  String ddlOptions() {
    StringBuilder ddl = new StringBuilder();
    storageOptions()
        .forEach(
            (k, v) ->
                ddl.append(", 'storage.option.").append(k).append("' = '").append(v).append("'"));
    return ddl.toString();
  }

  @Override
  public void close() throws Exception {
    proxy.stop();
  }

  private static String randomHex(int bytes) {
    byte[] random = new byte[bytes];
    RANDOM.nextBytes(random);
    StringBuilder hex = new StringBuilder();
    for (byte b : random) {
      hex.append(String.format("%02x", b));
    }
    return hex.toString();
  }

  /** Never the secret: this object may end up in a test report. */
  @Override
  public String toString() {
    return "S3Proxy at 127.0.0.1:" + proxy.getPort() + " (access key " + accessKey + ")";
  }
}
