package io.cobble.storage.s3;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import software.amazon.awssdk.core.exception.AbortedException;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.model.NoSuchBucketException;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Turns AWS SDK exceptions into {@link IOException}s that say which operation failed on which
 * object at which endpoint, and what to check. Messages are built from the operation, the object
 * address, the endpoint and the service's error text; never from options, so credentials cannot
 * leak into them.
 */
final class S3Errors {

  private final S3Options options;
  private final String bucket;

  S3Errors(S3Options options, String bucket) {
    this.options = options;
    this.bucket = bucket;
  }

  IOException translate(String operation, String object, SdkException error) {
    String where = " (" + operation + " " + object + " at " + options.describeEndpoint() + ")";
    if (error instanceof NoSuchKeyException) {
      return withCause(new NoSuchFileException(object), error);
    }
    if (error instanceof NoSuchBucketException) {
      return new IOException(
          "Bucket '" + bucket + "' does not exist" + where + "; create it or fix the URI.", error);
    }
    if (error instanceof ApiCallTimeoutException) {
      return new IOException(
          "S3 call timed out after api_call_timeout="
              + options.apiCallTimeout().toMillis()
              + "ms including retries"
              + where
              + ". Check that the endpoint is reachable and responsive.",
          error);
    }
    if (error instanceof ApiCallAttemptTimeoutException) {
      return new IOException(
          "S3 call attempt timed out after api_call_attempt_timeout="
              + options.apiCallAttemptTimeout().toMillis()
              + "ms"
              + where
              + ". Check that the endpoint is reachable and responsive.",
          error);
    }
    if (error instanceof AbortedException) {
      InterruptedIOException interrupted =
          new InterruptedIOException("S3 call interrupted" + where);
      interrupted.initCause(error);
      return interrupted;
    }
    if (error instanceof S3Exception) {
      S3Exception service = (S3Exception) error;
      int status = service.statusCode();
      String code =
          service.awsErrorDetails() == null ? null : service.awsErrorDetails().errorCode();
      if (status == 404 && !"NoSuchBucket".equals(code)) {
        return withCause(new NoSuchFileException(object), error);
      }
      if (status == 404) {
        return new IOException(
            "Bucket '" + bucket + "' does not exist" + where + "; create it or fix the URI.",
            error);
      }
      if (status == 401 || status == 403) {
        return withCause(
            new AccessDeniedException(
                object,
                null,
                "S3 endpoint "
                    + options.describeEndpoint()
                    + " denied access to bucket '"
                    + bucket
                    + "' (HTTP "
                    + status
                    + (code == null ? "" : ", " + code)
                    + ", during "
                    + operation
                    + "). Check storage.option.access_key_id and"
                    + " storage.option.secret_access_key, and the bucket policy."),
            error);
      }
      return new IOException(
          "S3 request failed with HTTP "
              + status
              + (code == null ? "" : " " + code)
              + where
              + ": "
              + serviceMessage(service),
          error);
    }
    return new IOException("S3 request failed" + where + ": " + error.getMessage(), error);
  }

  /** Whether {@code error} ended at a deadline or an interrupt, where no retry or probe helps. */
  static boolean isDeadlineOrAbort(SdkException error) {
    return error instanceof ApiCallTimeoutException
        || error instanceof ApiCallAttemptTimeoutException
        || error instanceof AbortedException;
  }

  private static String serviceMessage(S3Exception error) {
    if (error.awsErrorDetails() != null && error.awsErrorDetails().errorMessage() != null) {
      return error.awsErrorDetails().errorMessage();
    }
    return error.getMessage();
  }

  private static IOException withCause(IOException exception, Throwable cause) {
    exception.initCause(cause);
    return exception;
  }
}
