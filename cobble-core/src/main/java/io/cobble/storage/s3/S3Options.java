package io.cobble.storage.s3;

import io.cobble.storage.StorageOptions;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code s3} provider's settings, parsed and checked. Keys (set as {@code
 * storage.option.<key>}):
 *
 * <ul>
 *   <li>{@code endpoint}: base URL of an S3-compatible service, e.g. {@code
 *       https://s3.example.com}; absent means AWS S3 for {@code region}.
 *   <li>{@code region} ({@code us-east-1}): the signing region.
 *   <li>{@code access_key_id}, {@code secret_access_key}, optional {@code session_token}: static
 *       credentials, the default source.
 *   <li>{@code credentials_provider} ({@code static}): {@code static} uses only the keys above;
 *       {@code default} opts into the AWS SDK default chain (environment, system properties,
 *       profile files, container and instance roles); {@code anonymous} sends unsigned requests.
 *       Ambient credentials are never read unless this says {@code default}.
 *   <li>{@code enable_virtual_host_style} ({@code false}): {@code true} addresses buckets as {@code
 *       bucket.host}; {@code false} uses path style {@code host/bucket}, which S3-compatible stores
 *       generally require.
 *   <li>{@code connect_timeout} ({@code 10s}): TCP connect timeout.
 *   <li>{@code socket_timeout} ({@code 30s}): longest wait for data on an open connection.
 *   <li>{@code api_call_attempt_timeout} ({@code 30s}): limit for one HTTP attempt.
 *   <li>{@code api_call_timeout} ({@code 120s}): limit for a whole call including retries; no
 *       request blocks longer.
 *   <li>{@code max_attempts} ({@code 3}): attempts per call including the first; {@code 1} disables
 *       retries.
 *   <li>{@code part_size} ({@code 8mb}, at least {@code 5mb}): upload buffer; larger files are
 *       uploaded in parts of this size.
 * </ul>
 *
 * <p>Durations take a unit ({@code ms}, {@code s}, {@code min}, {@code h}); a bare number is
 * milliseconds. Sizes take {@code kb}, {@code mb} or {@code gb} (powers of 1024); a bare number is
 * bytes.
 */
public final class S3Options {

  public static final String ENDPOINT = "endpoint";
  public static final String REGION = "region";
  public static final String ACCESS_KEY_ID = "access_key_id";
  public static final String SECRET_ACCESS_KEY = "secret_access_key";
  public static final String SESSION_TOKEN = "session_token";
  public static final String CREDENTIALS_PROVIDER = "credentials_provider";
  public static final String ENABLE_VIRTUAL_HOST_STYLE = "enable_virtual_host_style";
  public static final String CONNECT_TIMEOUT = "connect_timeout";
  public static final String SOCKET_TIMEOUT = "socket_timeout";
  public static final String API_CALL_ATTEMPT_TIMEOUT = "api_call_attempt_timeout";
  public static final String API_CALL_TIMEOUT = "api_call_timeout";
  public static final String MAX_ATTEMPTS = "max_attempts";
  public static final String PART_SIZE = "part_size";

  public static final Set<String> KEYS =
      Set.of(
          ENDPOINT,
          REGION,
          ACCESS_KEY_ID,
          SECRET_ACCESS_KEY,
          SESSION_TOKEN,
          CREDENTIALS_PROVIDER,
          ENABLE_VIRTUAL_HOST_STYLE,
          CONNECT_TIMEOUT,
          SOCKET_TIMEOUT,
          API_CALL_ATTEMPT_TIMEOUT,
          API_CALL_TIMEOUT,
          MAX_ATTEMPTS,
          PART_SIZE);

  /** S3 rejects multipart parts below 5 MiB (except the last one). */
  static final int MIN_PART_SIZE = 5 * 1024 * 1024;

  private static final Pattern DURATION =
      Pattern.compile("(\\d{1,12})\\s*(ms|s|sec|min|m|h)?", Pattern.CASE_INSENSITIVE);
  private static final Pattern SIZE =
      Pattern.compile("(\\d{1,12})\\s*(b|kb|k|mb|m|gb|g)?", Pattern.CASE_INSENSITIVE);

  /** Where credentials come from. */
  public enum CredentialsSource {
    STATIC,
    DEFAULT,
    ANONYMOUS
  }

  private final Optional<URI> endpoint;
  private final String region;
  private final CredentialsSource credentialsSource;
  private final String accessKeyId;
  private final String secretAccessKey;
  private final String sessionToken;
  private final boolean virtualHostStyle;
  private final Duration connectTimeout;
  private final Duration socketTimeout;
  private final Duration apiCallAttemptTimeout;
  private final Duration apiCallTimeout;
  private final int maxAttempts;
  private final int partSize;

  private S3Options(StorageOptions options) {
    options.requireOnly("s3", KEYS);
    this.endpoint = options.get(ENDPOINT).map(S3Options::parseEndpoint);
    this.region = options.get(REGION).map(String::trim).orElse("us-east-1");
    if (region.isEmpty()) {
      throw new IllegalArgumentException("Storage option '" + REGION + "' must not be empty.");
    }
    this.accessKeyId = options.get(ACCESS_KEY_ID).orElse(null);
    this.secretAccessKey = options.get(SECRET_ACCESS_KEY).orElse(null);
    this.sessionToken = options.get(SESSION_TOKEN).orElse(null);
    this.credentialsSource = parseCredentialsSource(options.get(CREDENTIALS_PROVIDER));
    checkCredentials();
    this.virtualHostStyle = parseBoolean(options, ENABLE_VIRTUAL_HOST_STYLE, false);
    this.connectTimeout = parseDuration(options, CONNECT_TIMEOUT, Duration.ofSeconds(10));
    this.socketTimeout = parseDuration(options, SOCKET_TIMEOUT, Duration.ofSeconds(30));
    this.apiCallAttemptTimeout =
        parseDuration(options, API_CALL_ATTEMPT_TIMEOUT, Duration.ofSeconds(30));
    this.apiCallTimeout = parseDuration(options, API_CALL_TIMEOUT, Duration.ofSeconds(120));
    if (apiCallAttemptTimeout.compareTo(apiCallTimeout) > 0) {
      throw new IllegalArgumentException(
          "Storage option '"
              + API_CALL_ATTEMPT_TIMEOUT
              + "' ("
              + apiCallAttemptTimeout.toMillis()
              + "ms) exceeds '"
              + API_CALL_TIMEOUT
              + "' ("
              + apiCallTimeout.toMillis()
              + "ms); a single attempt cannot take longer than the whole call.");
    }
    this.maxAttempts = parseInt(options, MAX_ATTEMPTS, 3);
    if (maxAttempts < 1 || maxAttempts > 20) {
      throw new IllegalArgumentException(
          "Storage option '" + MAX_ATTEMPTS + "' must be between 1 and 20, not " + maxAttempts);
    }
    long size = parseSize(options, PART_SIZE, 8L * 1024 * 1024);
    if (size < MIN_PART_SIZE || size > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "Storage option '"
              + PART_SIZE
              + "' must be between 5mb and 2gb, not "
              + size
              + " bytes.");
    }
    this.partSize = (int) size;
  }

  /** Parses and validates; the message of any failure names the option and what to change. */
  public static S3Options parse(StorageOptions options) {
    return new S3Options(options);
  }

  public Optional<URI> endpoint() {
    return endpoint;
  }

  public String region() {
    return region;
  }

  public CredentialsSource credentialsSource() {
    return credentialsSource;
  }

  /** Static credentials; only meaningful for {@link CredentialsSource#STATIC}. */
  String accessKeyId() {
    return accessKeyId;
  }

  String secretAccessKey() {
    return secretAccessKey;
  }

  Optional<String> sessionToken() {
    return Optional.ofNullable(sessionToken);
  }

  public boolean virtualHostStyle() {
    return virtualHostStyle;
  }

  public Duration connectTimeout() {
    return connectTimeout;
  }

  public Duration socketTimeout() {
    return socketTimeout;
  }

  public Duration apiCallAttemptTimeout() {
    return apiCallAttemptTimeout;
  }

  public Duration apiCallTimeout() {
    return apiCallTimeout;
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  public int partSize() {
    return partSize;
  }

  /** Where requests go, for messages: the endpoint, or AWS S3 in the region. */
  public String describeEndpoint() {
    return endpoint.map(URI::toString).orElse("AWS S3 (" + region + ")");
  }

  /** Credentials are never shown, only whether and where from they are set. */
  @Override
  public String toString() {
    return "S3Options[endpoint="
        + describeEndpoint()
        + ", region="
        + region
        + ", credentials="
        + credentialsSource.name().toLowerCase(Locale.ROOT)
        + (credentialsSource == CredentialsSource.STATIC ? " (hidden)" : "")
        + ", virtualHostStyle="
        + virtualHostStyle
        + ", connectTimeout="
        + connectTimeout
        + ", socketTimeout="
        + socketTimeout
        + ", apiCallAttemptTimeout="
        + apiCallAttemptTimeout
        + ", apiCallTimeout="
        + apiCallTimeout
        + ", maxAttempts="
        + maxAttempts
        + ", partSize="
        + partSize
        + "]";
  }

  private void checkCredentials() {
    boolean anyStatic = accessKeyId != null || secretAccessKey != null || sessionToken != null;
    switch (credentialsSource) {
      case STATIC:
        if (accessKeyId == null || secretAccessKey == null) {
          throw new IllegalArgumentException(
              "The s3 storage provider needs both '"
                  + ACCESS_KEY_ID
                  + "' and '"
                  + SECRET_ACCESS_KEY
                  + "' (missing: "
                  + (accessKeyId == null ? ACCESS_KEY_ID : SECRET_ACCESS_KEY)
                  + "). To use the AWS default credential chain instead set '"
                  + CREDENTIALS_PROVIDER
                  + "' to 'default'; for public buckets set it to 'anonymous'.");
        }
        break;
      case DEFAULT:
      case ANONYMOUS:
        if (anyStatic) {
          throw new IllegalArgumentException(
              "Storage option '"
                  + CREDENTIALS_PROVIDER
                  + "' is '"
                  + credentialsSource.name().toLowerCase(Locale.ROOT)
                  + "', which ignores '"
                  + ACCESS_KEY_ID
                  + "', '"
                  + SECRET_ACCESS_KEY
                  + "' and '"
                  + SESSION_TOKEN
                  + "'; remove them or set '"
                  + CREDENTIALS_PROVIDER
                  + "' to 'static'.");
        }
        break;
      default:
        throw new AssertionError(credentialsSource);
    }
  }

  private static CredentialsSource parseCredentialsSource(Optional<String> value) {
    if (value.isEmpty()) {
      return CredentialsSource.STATIC;
    }
    try {
      return CredentialsSource.valueOf(value.get().trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "Storage option '"
              + CREDENTIALS_PROVIDER
              + "' must be static, default or anonymous, not '"
              + value.get()
              + "'.");
    }
  }

  private static URI parseEndpoint(String value) {
    URI uri;
    try {
      uri = URI.create(value.trim());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "Storage option '" + ENDPOINT + "' is not a URL: '" + value + "'.", e);
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
      throw new IllegalArgumentException(
          "Storage option '"
              + ENDPOINT
              + "' must be an http(s) URL with a host, like https://s3.example.com, not '"
              + value
              + "'.");
    }
    if (uri.getUserInfo() != null) {
      throw new IllegalArgumentException(
          "Storage option '"
              + ENDPOINT
              + "' must not carry credentials; use '"
              + ACCESS_KEY_ID
              + "' and '"
              + SECRET_ACCESS_KEY
              + "'.");
    }
    return uri;
  }

  private static boolean parseBoolean(StorageOptions options, String key, boolean fallback) {
    Optional<String> value = options.get(key);
    if (value.isEmpty()) {
      return fallback;
    }
    switch (value.get().trim().toLowerCase(Locale.ROOT)) {
      case "true":
        return true;
      case "false":
        return false;
      default:
        throw new IllegalArgumentException(
            "Storage option '" + key + "' must be true or false, not '" + value.get() + "'.");
    }
  }

  private static int parseInt(StorageOptions options, String key, int fallback) {
    Optional<String> value = options.get(key);
    if (value.isEmpty()) {
      return fallback;
    }
    try {
      return Integer.parseInt(value.get().trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "Storage option '" + key + "' must be a whole number, not '" + value.get() + "'.");
    }
  }

  private static Duration parseDuration(StorageOptions options, String key, Duration fallback) {
    Optional<String> value = options.get(key);
    if (value.isEmpty()) {
      return fallback;
    }
    Matcher matcher = DURATION.matcher(value.get().trim());
    if (!matcher.matches()) {
      throw new IllegalArgumentException(
          "Storage option '"
              + key
              + "' must be a duration like 500ms, 30s or 2min, not '"
              + value.get()
              + "'.");
    }
    long amount = Long.parseLong(matcher.group(1));
    String unit = matcher.group(2) == null ? "ms" : matcher.group(2).toLowerCase(Locale.ROOT);
    Duration duration;
    switch (unit) {
      case "ms":
        duration = Duration.ofMillis(amount);
        break;
      case "s":
      case "sec":
        duration = Duration.ofSeconds(amount);
        break;
      case "m":
      case "min":
        duration = Duration.ofMinutes(amount);
        break;
      default:
        duration = Duration.ofHours(amount);
    }
    if (duration.isZero()) {
      throw new IllegalArgumentException(
          "Storage option '" + key + "' must be positive; a zero timeout would never fire.");
    }
    return duration;
  }

  private static long parseSize(StorageOptions options, String key, long fallback) {
    Optional<String> value = options.get(key);
    if (value.isEmpty()) {
      return fallback;
    }
    Matcher matcher = SIZE.matcher(value.get().trim());
    if (!matcher.matches()) {
      throw new IllegalArgumentException(
          "Storage option '" + key + "' must be a size like 8mb, not '" + value.get() + "'.");
    }
    long amount = Long.parseLong(matcher.group(1));
    String unit = matcher.group(2) == null ? "b" : matcher.group(2).toLowerCase(Locale.ROOT);
    switch (unit) {
      case "k":
      case "kb":
        return amount * 1024;
      case "m":
      case "mb":
        return amount * 1024 * 1024;
      case "g":
      case "gb":
        return amount * 1024 * 1024 * 1024;
      default:
        return amount;
    }
  }
}
