package io.cobble.storage.s3;

import java.net.URI;
import java.net.URISyntaxException;

/** Bucket and key prefix of an {@code s3://bucket/prefix} URI. */
final class S3Location {

  private final String bucket;
  private final String prefix;

  private S3Location(String bucket, String prefix) {
    this.bucket = bucket;
    this.prefix = prefix;
  }

  static S3Location parse(URI uri) {
    if (uri.getUserInfo() != null) {
      throw new IllegalArgumentException(
          "S3 URI must not carry credentials; pass them as storage options (got s3://"
              + uri.getHost()
              + uri.getRawPath()
              + ").");
    }
    String bucket = uri.getHost() != null ? uri.getHost() : uri.getAuthority();
    if (bucket == null || bucket.isEmpty()) {
      throw new IllegalArgumentException(
          "S3 URI '" + uri + "' has no bucket; write it as s3://bucket/optional/prefix.");
    }
    if (uri.getQuery() != null || uri.getFragment() != null) {
      throw new IllegalArgumentException(
          "S3 URI '" + uri + "' must not have a query or fragment; use storage options.");
    }
    String path = uri.getPath() == null ? "" : uri.getPath();
    while (path.startsWith("/")) {
      path = path.substring(1);
    }
    while (path.endsWith("/")) {
      path = path.substring(0, path.length() - 1);
    }
    return new S3Location(bucket, path);
  }

  String bucket() {
    return bucket;
  }

  /** The object key of a storage path. */
  String key(String path) {
    return prefix.isEmpty() ? path : prefix + "/" + path;
  }

  /** The key prefix that lists storage paths starting with {@code pathPrefix}. */
  String keyPrefix(String pathPrefix) {
    return prefix.isEmpty() ? pathPrefix : prefix + "/" + pathPrefix;
  }

  /** The storage path of an object key listed under this location. */
  String path(String key) {
    return prefix.isEmpty() ? key : key.substring(prefix.length() + 1);
  }

  /** The object's address for messages. */
  String describe(String path) {
    return "s3://" + bucket + "/" + key(path);
  }

  URI root() {
    try {
      return new URI("s3", bucket, "/" + prefix, null);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("Bucket '" + bucket + "' is not a valid host name.", e);
    }
  }
}
