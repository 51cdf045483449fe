package io.cobble.storage.s3;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageInput;
import io.cobble.storage.StorageOutput;
import io.cobble.storage.StoragePath;
import java.io.IOException;
import java.net.URI;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.stream.Collectors;
import software.amazon.awssdk.auth.credentials.AnonymousCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.core.sync.ResponseTransformer;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.profiles.ProfileFile;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.LegacyMd5Plugin;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Error;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.utils.SdkAutoCloseable;

/**
 * {@link Storage} on an S3 bucket under a key prefix. Every call is bounded by {@code
 * api_call_timeout}; positional reads are ranged GETs; files are uploaded whole at close (in parts
 * above {@code part_size}), so an object is either absent or complete.
 */
public final class S3Storage implements Storage {

  /** DeleteObjects accepts at most this many keys per request. */
  private static final int DELETE_BATCH = 1000;

  private final S3Location location;
  private final S3Options options;
  private final S3Client client;
  private final SdkHttpClient httpClient;
  private final AwsCredentialsProvider credentials;
  private final S3Errors errors;

  private S3Storage(
      S3Location location,
      S3Options options,
      S3Client client,
      SdkHttpClient httpClient,
      AwsCredentialsProvider credentials) {
    this.location = location;
    this.options = options;
    this.client = client;
    this.httpClient = httpClient;
    this.credentials = credentials;
    this.errors = new S3Errors(options, location.bucket());
  }

  static S3Storage open(S3Location location, S3Options options) {
    // The HTTP client is created here rather than found by the SDK's service discovery, which
    // scans the context class loader and fails or picks a foreign copy inside Flink.
    SdkHttpClient httpClient =
        UrlConnectionHttpClient.builder()
            .connectionTimeout(options.connectTimeout())
            .socketTimeout(options.socketTimeout())
            .build();
    AwsCredentialsProvider credentials = credentials(options);
    S3ClientBuilder builder =
        S3Client.builder()
            .httpClient(httpClient)
            .region(Region.of(options.region()))
            .credentialsProvider(credentials)
            .forcePathStyle(!options.virtualHostStyle())
            // Newer SDKs add CRC checksums to every request; many S3-compatible stores reject
            // them. Checksums are sent and checked only where the API requires them.
            .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
            .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
            // Operations that require a checksum (DeleteObjects) also get Content-MD5, which many
            // S3-compatible stores still demand instead of the newer CRC headers.
            .addPlugin(LegacyMd5Plugin.create())
            .overrideConfiguration(
                config -> {
                  config
                      .apiCallTimeout(options.apiCallTimeout())
                      .apiCallAttemptTimeout(options.apiCallAttemptTimeout())
                      .retryStrategy(
                          AwsRetryStrategy.standardRetryStrategy().toBuilder()
                              .maxAttempts(options.maxAttempts())
                              .build());
                  if (options.credentialsSource() != S3Options.CredentialsSource.DEFAULT) {
                    // Without this, ~/.aws/config would still change endpoints, retries and
                    // addressing behind the user's explicit options.
                    ProfileFile none =
                        ProfileFile.builder()
                            .content("")
                            .type(ProfileFile.Type.CONFIGURATION)
                            .build();
                    config.defaultProfileFileSupplier(() -> none);
                  }
                });
    options.endpoint().ifPresent(builder::endpointOverride);
    return new S3Storage(location, options, builder.build(), httpClient, credentials);
  }

  private static AwsCredentialsProvider credentials(S3Options options) {
    switch (options.credentialsSource()) {
      case STATIC:
        return StaticCredentialsProvider.create(
            options.sessionToken().isPresent()
                ? AwsSessionCredentials.create(
                    options.accessKeyId(), options.secretAccessKey(), options.sessionToken().get())
                : AwsBasicCredentials.create(options.accessKeyId(), options.secretAccessKey()));
      case DEFAULT:
        return DefaultCredentialsProvider.builder().build();
      case ANONYMOUS:
        return AnonymousCredentialsProvider.create();
      default:
        throw new AssertionError(options.credentialsSource());
    }
  }

  @Override
  public URI uri() {
    return location.root();
  }

  @Override
  public StorageOutput create(String path) {
    StoragePath.check(path);
    return new S3Output(this, path, options.partSize());
  }

  @Override
  public StorageInput open(String path) throws IOException {
    return new S3Input(this, path, length(path));
  }

  @Override
  public StorageInput open(String path, long length) {
    StoragePath.check(path);
    return new S3Input(this, path, length);
  }

  @Override
  public byte[] readAll(String path) throws IOException {
    String key = key(path);
    try {
      return client
          .getObject(b -> b.bucket(location.bucket()).key(key), ResponseTransformer.toBytes())
          .asByteArrayUnsafe();
    } catch (SdkException e) {
      throw errors.translate("read", location.describe(path), e);
    }
  }

  /** One ranged GET of {@code length} bytes at {@code position}. */
  byte[] readRange(String path, long position, int length) throws IOException {
    String key = key(path);
    String range = "bytes=" + position + "-" + (position + length - 1);
    try {
      return client
          .getObject(
              b -> b.bucket(location.bucket()).key(key).range(range), ResponseTransformer.toBytes())
          .asByteArrayUnsafe();
    } catch (SdkException e) {
      throw errors.translate("ranged read", location.describe(path), e);
    }
  }

  @Override
  public long length(String path) throws IOException {
    String key = key(path);
    try {
      return client.headObject(b -> b.bucket(location.bucket()).key(key)).contentLength();
    } catch (SdkException e) {
      throw errors.translate("length", location.describe(path), e);
    }
  }

  @Override
  public boolean exists(String path) throws IOException {
    String key = key(path);
    try {
      client.headObject(b -> b.bucket(location.bucket()).key(key));
      return true;
    } catch (NoSuchKeyException e) {
      return false;
    } catch (S3Exception e) {
      // HEAD responses carry no error body, so a missing key shows only as its status.
      if (e.statusCode() == 404) {
        return false;
      }
      throw errors.translate("exists", location.describe(path), e);
    } catch (SdkException e) {
      throw errors.translate("exists", location.describe(path), e);
    }
  }

  @Override
  public List<String> list(String prefix) throws IOException {
    StoragePath.checkPrefix(prefix);
    String keyPrefix = location.keyPrefix(prefix);
    List<String> paths = new ArrayList<>();
    try {
      for (S3Object object :
          client
              .listObjectsV2Paginator(b -> b.bucket(location.bucket()).prefix(keyPrefix))
              .contents()) {
        // Keys ending in '/' are folder markers some tools create, not files.
        if (!object.key().endsWith("/")) {
          paths.add(location.path(object.key()));
        }
      }
    } catch (SdkException e) {
      throw errors.translate("list", location.describe(prefix), e);
    }
    paths.sort(null);
    return paths;
  }

  @Override
  public void delete(String path) throws IOException {
    String key = key(path);
    try {
      client.deleteObject(b -> b.bucket(location.bucket()).key(key));
    } catch (SdkException e) {
      throw errors.translate("delete", location.describe(path), e);
    }
  }

  @Override
  public void deleteAll(Collection<String> paths) throws IOException {
    List<ObjectIdentifier> batch = new ArrayList<>();
    for (String path : paths) {
      batch.add(ObjectIdentifier.builder().key(key(path)).build());
      if (batch.size() == DELETE_BATCH) {
        deleteBatch(batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      deleteBatch(batch);
    }
  }

  private void deleteBatch(List<ObjectIdentifier> batch) throws IOException {
    Delete delete = Delete.builder().objects(batch).quiet(true).build();
    DeleteObjectsResponse response;
    try {
      response = client.deleteObjects(b -> b.bucket(location.bucket()).delete(delete));
    } catch (SdkException e) {
      throw errors.translate(
          "delete of " + batch.size() + " objects", "s3://" + location.bucket(), e);
    }
    if (response.hasErrors() && !response.errors().isEmpty()) {
      List<S3Error> failed = response.errors();
      throw new IOException(
          "S3 could not delete "
              + failed.size()
              + " of "
              + batch.size()
              + " objects in bucket '"
              + location.bucket()
              + "' at "
              + options.describeEndpoint()
              + ", e.g. "
              + failed.stream()
                  .limit(3)
                  .map(error -> error.key() + " (" + error.code() + ": " + error.message() + ")")
                  .collect(Collectors.joining(", ")));
    }
  }

  /** Object stores cannot rename: this copies on the server, then deletes the source. */
  @Override
  public boolean atomicRename() {
    return false;
  }

  @Override
  public void rename(String source, String target) throws IOException {
    String sourceKey = key(source);
    String targetKey = key(target);
    try {
      client.copyObject(
          b ->
              b.sourceBucket(location.bucket())
                  .sourceKey(sourceKey)
                  .destinationBucket(location.bucket())
                  .destinationKey(targetKey));
    } catch (SdkException e) {
      throw errors.translate(
          "copy to " + location.describe(target) + " from", location.describe(source), e);
    }
    delete(source);
  }

  /** A single PUT: S3 makes an object visible only when it is complete. */
  @Override
  public void publishAtomically(String path, byte[] bytes) throws IOException {
    putObject(path, RequestBody.fromBytes(bytes));
  }

  /** A conditional PUT ({@code If-None-Match: *}): the store refuses it when the key exists. */
  @Override
  public boolean createExclusively(String path, byte[] bytes) throws IOException {
    String key = key(path);
    try {
      client.putObject(
          b -> b.bucket(location.bucket()).key(key).ifNoneMatch("*"), RequestBody.fromBytes(bytes));
      return true;
    } catch (S3Exception e) {
      // 412: the key exists. 409: a concurrent conditional write to the key is in progress.
      if (e.statusCode() == 412 || e.statusCode() == 409) {
        return holds(path, bytes);
      }
      throw errors.translate("conditional upload", location.describe(path), e);
    } catch (SdkException e) {
      throw uploadFailure("conditional upload", path, e);
    }
  }

  /**
   * Whether {@code path} holds exactly {@code bytes}: the client retries a conditional PUT whose
   * response was lost, and the retry then finds the object its own first attempt wrote.
   */
  private boolean holds(String path, byte[] bytes) throws IOException {
    try {
      return Arrays.equals(readAll(path), bytes);
    } catch (NoSuchFileException e) {
      return false;
    }
  }

  void putObject(String path, RequestBody body) throws IOException {
    String key = key(path);
    try {
      client.putObject(b -> b.bucket(location.bucket()).key(key), body);
    } catch (SdkException e) {
      throw uploadFailure("upload", path, e);
    }
  }

  String startMultipart(String path) throws IOException {
    String key = key(path);
    try {
      return client.createMultipartUpload(b -> b.bucket(location.bucket()).key(key)).uploadId();
    } catch (SdkException e) {
      throw errors.translate("multipart upload start", location.describe(path), e);
    }
  }

  String uploadPart(String path, String uploadId, int partNumber, RequestBody body)
      throws IOException {
    String key = key(path);
    try {
      return client
          .uploadPart(
              b -> b.bucket(location.bucket()).key(key).uploadId(uploadId).partNumber(partNumber),
              body)
          .eTag();
    } catch (SdkException e) {
      throw uploadFailure("upload of part " + partNumber + " of", path, e);
    }
  }

  /**
   * A store that refuses an upload may answer and close the connection before reading the body, and
   * the client then sees only a broken connection. A request without a body learns the store's
   * verdict, so a refused credential is reported as such instead of as a network error.
   */
  private IOException uploadFailure(String operation, String path, SdkException error) {
    if (error instanceof SdkClientException && !S3Errors.isDeadlineOrAbort(error)) {
      try {
        client.headBucket(b -> b.bucket(location.bucket()));
      } catch (S3Exception verdict) {
        if (verdict.statusCode() == 401 || verdict.statusCode() == 403) {
          IOException denied = errors.translate(operation, location.describe(path), verdict);
          denied.addSuppressed(error);
          return denied;
        }
      } catch (SdkException probeFailed) {
        error.addSuppressed(probeFailed);
      }
    }
    return errors.translate(operation, location.describe(path), error);
  }

  void completeMultipart(String path, String uploadId, List<CompletedPart> parts)
      throws IOException {
    String key = key(path);
    try {
      client.completeMultipartUpload(
          b ->
              b.bucket(location.bucket())
                  .key(key)
                  .uploadId(uploadId)
                  .multipartUpload(m -> m.parts(parts)));
    } catch (SdkException e) {
      throw errors.translate("multipart upload completion", location.describe(path), e);
    }
  }

  /**
   * Best effort: the upload is failing with {@code failure} already, to which an abort error is
   * attached. An upload left behind is invisible and expires by bucket lifecycle rules.
   */
  void abortMultipart(String path, String uploadId, Throwable failure) {
    String key = key(path);
    try {
      client.abortMultipartUpload(b -> b.bucket(location.bucket()).key(key).uploadId(uploadId));
    } catch (SdkException e) {
      failure.addSuppressed(errors.translate("multipart upload abort", location.describe(path), e));
    }
  }

  String describe(String path) {
    return location.describe(path);
  }

  @Override
  public void close() {
    client.close();
    httpClient.close();
    if (credentials instanceof SdkAutoCloseable) {
      ((SdkAutoCloseable) credentials).close();
    }
  }

  /** Never shows credentials. */
  @Override
  public String toString() {
    return "S3Storage[" + location.root() + ", " + options + "]";
  }

  private String key(String path) {
    return location.key(StoragePath.check(path));
  }
}
