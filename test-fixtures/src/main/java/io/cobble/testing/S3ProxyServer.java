package io.cobble.testing;

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
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A real S3Proxy in the test JVM on 127.0.0.1 with AWS V4 signature authentication and a random key
 * pair, over a filesystem blob store ({@code <directory>/<bucket>/<key>}). {@link #clientOptions()}
 * are the options of Cobble's s3 provider (a table's {@code storage.option.*}, {@link
 * #ddlOptions()}); {@link #client()} is a plain AWS SDK client. {@link #restart()} brings a stopped
 * server back where it was; {@link #startSibling()} serves the same objects on another endpoint
 * with other credentials. {@link #toString()} never shows the secret.
 */
public final class S3ProxyServer implements AutoCloseable {

  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path directory;
  private final BlobStore blobStore;
  private final S3Proxy proxy;
  private final int port;
  private final String accessKey;
  private final String secretKey;

  private S3ProxyServer(
      Path directory, BlobStore blobStore, S3Proxy proxy, String accessKey, String secretKey) {
    this.directory = directory;
    this.blobStore = blobStore;
    this.proxy = proxy;
    this.port = proxy.getPort();
    this.accessKey = accessKey;
    this.secretKey = secretKey;
  }

  /** Starts a server on a free port whose objects live in {@code directory}, with the buckets. */
  public static S3ProxyServer start(Path directory, String... buckets) throws Exception {
    Files.createDirectories(directory);
    BlobStore blobStore = new FilesystemNio2BlobStore(directory.toString());
    for (String bucket : buckets) {
      blobStore.createContainer(bucket);
    }
    return start(directory.toAbsolutePath(), blobStore, 0, "AK" + randomHex(9), randomHex(20));
  }

  private static S3ProxyServer start(
      Path directory, BlobStore blobStore, int port, String accessKey, String secretKey)
      throws Exception {
    S3Proxy proxy =
        S3Proxy.builder()
            .blobStore(blobStore)
            .endpoint(URI.create("http://127.0.0.1:" + port))
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
    return new S3ProxyServer(directory, blobStore, proxy, accessKey, secretKey);
  }

  /**
   * A new server on this one's port, objects and key pair (stopping this one if it still runs):
   * clients configured for this server reconnect to it.
   */
  public S3ProxyServer restart() throws Exception {
    close();
    return start(directory, blobStore, port, accessKey, secretKey);
  }

  /** Another server on a free port over the same objects, with a fresh key pair of its own. */
  public S3ProxyServer startSibling() throws Exception {
    return start(directory, blobStore, 0, "AK" + randomHex(9), randomHex(20));
  }

  /** The port, also after {@link #close()}. */
  public int port() {
    return port;
  }

  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + port());
  }

  public String accessKey() {
    return accessKey;
  }

  public String secretKey() {
    return secretKey;
  }

  /** Where the objects live on disk: {@code <directory>/<bucket>/<key>}. */
  public Path directory() {
    return directory;
  }

  public BlobStore blobStore() {
    return blobStore;
  }

  /**
   * The options with which Cobble's s3 provider reaches this server (path style, this key pair).
   */
  public Map<String, String> clientOptions() {
    Map<String, String> options = new LinkedHashMap<>();
    options.put("endpoint", endpoint().toString());
    options.put("region", "us-east-1");
    options.put("access_key_id", accessKey);
    options.put("secret_access_key", secretKey);
    options.put("enable_virtual_host_style", "false");
    return options;
  }

  /**
   * {@link #clientOptions()} with bounded timeouts and 2 attempts, so calls to a stopped server
   * fail within seconds. The bounds leave room for a loaded 2-core machine stalling a healthy call
   * for a few seconds (a 1 s attempt timeout once turned an expected HTTP 403 into a timeout in
   * CI).
   */
  public Map<String, String> failFastClientOptions() {
    Map<String, String> options = clientOptions();
    options.put("api_call_timeout", "12s");
    options.put("api_call_attempt_timeout", "5s");
    options.put("max_attempts", "2");
    options.put("connect_timeout", "2s");
    options.put("socket_timeout", "5s");
    return options;
  }

  /** {@link #clientOptions()} as {@code , 'storage.option.<key>' = '<value>'} for a table's DDL. */
  public String ddlOptions() {
    StringBuilder ddl = new StringBuilder();
    clientOptions()
        .forEach(
            (k, v) ->
                ddl.append(", 'storage.option.").append(k).append("' = '").append(v).append("'"));
    return ddl.toString();
  }

  /** An AWS SDK v2 client for this server (path style, signed with this key pair). */
  public S3Client client() {
    return client(accessKey, secretKey);
  }

  /** An AWS SDK v2 client for this server signing with another key pair (to be refused). */
  public S3Client client(String accessKey, String secretKey) {
    return S3Client.builder()
        .endpointOverride(endpoint())
        .region(Region.US_EAST_1)
        .forcePathStyle(true)
        .credentialsProvider(
            StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
        .httpClientBuilder(UrlConnectionHttpClient.builder())
        .build();
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
    return "S3Proxy at " + endpoint() + " (access key " + accessKey + ")";
  }
}
