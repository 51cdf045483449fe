package io.cobble.storage.s3;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProvider;
import java.net.URI;
import java.util.Set;

/**
 * The {@code s3} scheme: S3 and S3-compatible object stores through the AWS SDK v2. Option keys are
 * described on {@link S3Options}. This class touches no SDK type until {@link #open}, so the
 * service loader can list it even where the SDK is not on the class path.
 */
public final class S3StorageProvider implements StorageProvider {

  @Override
  public Set<String> schemes() {
    return Set.of("s3");
  }

  @Override
  public Set<String> optionKeys() {
    return S3Options.KEYS;
  }

  @Override
  public Storage open(URI base, StorageOptions options) {
    return S3Storage.open(S3Location.parse(base), S3Options.parse(options));
  }
}
