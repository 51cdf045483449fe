package io.cobble.it.realcluster;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
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
 * Real S3Proxy servers in the test JVM over one filesystem blob store. Each {@link Endpoint} is its
 * own S3Proxy on 127.0.0.1 (free port) with AWS V4 signature authentication and a random key pair,
 * so two clients (Flink's S3 plugin and a Cobble table) can use different credentials for the same
 * buckets, and a leak of one secret can be told apart from the other.
 */
final class S3ProxyFixture implements AutoCloseable {

  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path directory;
  private final BlobStore blobStore;
  private final List<S3Proxy> proxies = new ArrayList<>();

  private S3ProxyFixture(Path directory, BlobStore blobStore) {
    this.directory = directory;
    this.blobStore = blobStore;
  }

  /** A blob store in {@code directory} (created) with the given buckets; no endpoint yet. */
  static S3ProxyFixture create(Path directory, String... buckets) throws Exception {
    Files.createDirectories(directory);
    BlobStore blobStore = new FilesystemNio2BlobStore(directory.toString());
    for (String bucket : buckets) {
      blobStore.createContainer(bucket);
    }
    return new S3ProxyFixture(directory.toAbsolutePath(), blobStore);
  }

  /** Where the objects live on disk ({@code <directory>/<bucket>/<key>}). */
  Path directory() {
    return directory;
  }

  /** Starts one more S3Proxy over the same blob store, with a fresh random key pair. */
  Endpoint startEndpoint() throws Exception {
    String accessKey = "AK" + randomHex(9);
    String secretKey = randomHex(20);
    S3Proxy proxy =
        S3Proxy.builder()
            .blobStore(blobStore)
            .endpoint(URI.create("http://127.0.0.1:0"))
            .awsAuthentication(AuthenticationType.AWS_V4, accessKey, secretKey)
            .build();
    proxies.add(proxy);
    proxy.start();
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!"STARTED".equals(proxy.getState())) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("S3Proxy did not start within 20s: " + proxy.getState());
      }
      Thread.sleep(10);
    }
    return new Endpoint(URI.create("http://127.0.0.1:" + proxy.getPort()), accessKey, secretKey);
  }

  @Override
  public void close() throws Exception {
    Exception first = null;
    for (S3Proxy proxy : proxies) {
      try {
        proxy.stop();
      } catch (Exception e) {
        if (first == null) {
          first = e;
        }
      }
    }
    if (first != null) {
      throw first;
    }
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

  /** One S3Proxy: its URL and the only key pair it accepts. */
  static final class Endpoint {
    private final URI uri;
    private final String accessKey;
    private final String secretKey;

    Endpoint(URI uri, String accessKey, String secretKey) {
      this.uri = uri;
      this.accessKey = accessKey;
      this.secretKey = secretKey;
    }

    URI uri() {
      return uri;
    }

    String accessKey() {
      return accessKey;
    }

    String secretKey() {
      return secretKey;
    }

    /** An AWS SDK v2 client for this endpoint (path style, signed with this key pair). */
    S3Client client() {
      return S3Client.builder()
          .endpointOverride(uri)
          .region(Region.US_EAST_1)
          .forcePathStyle(true)
          .credentialsProvider(
              StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
          .httpClientBuilder(UrlConnectionHttpClient.builder())
          .build();
    }

    /** Never the secret: this object may end up in a test report. */
    @Override
    public String toString() {
      return "S3Proxy at " + uri + " (access key " + accessKey + ")";
    }
  }
}
