package io.cobble.storage.s3;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.S3ProxyServer;
import java.io.IOException;
import java.net.URI;

/** Opens locations on a test {@link S3ProxyServer} through Cobble's s3 provider. */
public final class S3Volumes {

  private S3Volumes() {}

  /** {@code s3://<location>} on {@code server}, with its credentials. */
  public static Storage open(S3ProxyServer server, String location) throws IOException {
    return StorageProviders.open(
        URI.create("s3://" + location), StorageOptions.of(server.clientOptions()));
  }
}
