package io.cobble.storage.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.storage.StorageOptions;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class S3OptionsTest {

  private static final String SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY";

  private static Map<String, String> minimal() {
    Map<String, String> options = new HashMap<>();
    options.put("access_key_id", "AKIDEXAMPLE");
    options.put("secret_access_key", SECRET);
    return options;
  }

  private static String rejected(Map<String, String> options) {
    String message =
        assertThrows(
                IllegalArgumentException.class, () -> S3Options.parse(StorageOptions.of(options)))
            .getMessage();
    assertFalse(message.contains(SECRET), message);
    return message;
  }

  @Test
  void defaults() {
    S3Options options = S3Options.parse(StorageOptions.of(minimal()));
    assertEquals(Optional.empty(), options.endpoint());
    assertEquals("us-east-1", options.region());
    assertEquals(S3Options.CredentialsSource.STATIC, options.credentialsSource());
    assertFalse(options.virtualHostStyle(), "path style by default for S3-compatible stores");
    assertEquals(Duration.ofSeconds(10), options.connectTimeout());
    assertEquals(Duration.ofSeconds(30), options.socketTimeout());
    assertEquals(Duration.ofSeconds(30), options.apiCallAttemptTimeout());
    assertEquals(Duration.ofSeconds(120), options.apiCallTimeout());
    assertEquals(3, options.maxAttempts());
    assertEquals(8 * 1024 * 1024, options.partSize());
    assertEquals("AWS S3 (us-east-1)", options.describeEndpoint());
  }

  @Test
  void theSpecExampleParses() {
    Map<String, String> config = new HashMap<>();
    config.put("storage.option.endpoint", "https://s3.example.com");
    config.put("storage.option.access_key_id", "AKIDEXAMPLE");
    config.put("storage.option.secret_access_key", SECRET);
    config.put("storage.option.enable_virtual_host_style", "false");
    config.put("storage.option.region", "us-east-1");
    S3Options options = S3Options.parse(StorageOptions.fromConfiguration(config));
    assertEquals(Optional.of(URI.create("https://s3.example.com")), options.endpoint());
    assertFalse(options.virtualHostStyle());
  }

  @Test
  void unitsAreParsed() {
    Map<String, String> raw = minimal();
    raw.put("enable_virtual_host_style", "TRUE");
    raw.put("connect_timeout", "500ms");
    raw.put("socket_timeout", "2 min");
    raw.put("api_call_attempt_timeout", "1500");
    raw.put("api_call_timeout", "1h");
    raw.put("max_attempts", "1");
    raw.put("part_size", "16MB");
    S3Options options = S3Options.parse(StorageOptions.of(raw));
    assertTrue(options.virtualHostStyle());
    assertEquals(Duration.ofMillis(500), options.connectTimeout());
    assertEquals(Duration.ofMinutes(2), options.socketTimeout());
    assertEquals(Duration.ofMillis(1500), options.apiCallAttemptTimeout());
    assertEquals(Duration.ofHours(1), options.apiCallTimeout());
    assertEquals(1, options.maxAttempts());
    assertEquals(16 * 1024 * 1024, options.partSize());
  }

  @Test
  void badValuesNameTheOption() {
    Map<String, String> raw = minimal();
    raw.put("api_call_timeout", "soon");
    assertTrue(rejected(raw).contains("'api_call_timeout'"));
    raw = minimal();
    raw.put("api_call_timeout", "0s");
    assertTrue(rejected(raw).contains("positive"));
    raw = minimal();
    raw.put("api_call_timeout", "1s");
    raw.put("api_call_attempt_timeout", "5s");
    assertTrue(rejected(raw).contains("exceeds"));
    raw = minimal();
    raw.put("max_attempts", "0");
    assertTrue(rejected(raw).contains("'max_attempts'"));
    raw = minimal();
    raw.put("part_size", "1mb");
    assertTrue(rejected(raw).contains("'part_size'"));
    raw = minimal();
    raw.put("enable_virtual_host_style", "yes");
    assertTrue(rejected(raw).contains("'enable_virtual_host_style'"));
    raw = minimal();
    raw.put("endpoint", "s3.example.com");
    assertTrue(rejected(raw).contains("http(s) URL"));
    raw = minimal();
    raw.put("endpoint", "https://user:" + SECRET + "@s3.example.com");
    assertTrue(rejected(raw).contains("must not carry credentials"));
    raw = minimal();
    raw.put("credentials_provider", "instance");
    assertTrue(rejected(raw).contains("static, default or anonymous"));
  }

  @Test
  void credentialsComeFromExactlyOneSource() {
    Map<String, String> raw = minimal();
    raw.remove("secret_access_key");
    assertTrue(rejected(raw).contains("missing: secret_access_key"));
    raw = new HashMap<>();
    assertTrue(rejected(raw).contains("'credentials_provider'"));
    raw = minimal();
    raw.put("credentials_provider", "default");
    assertTrue(rejected(raw).contains("remove them"));
    raw = new HashMap<>();
    raw.put("credentials_provider", "anonymous");
    assertEquals(
        S3Options.CredentialsSource.ANONYMOUS,
        S3Options.parse(StorageOptions.of(raw)).credentialsSource());
  }

  @Test
  void toStringNeverShowsCredentials() {
    Map<String, String> raw = minimal();
    raw.put("session_token", "session-" + SECRET);
    String text = S3Options.parse(StorageOptions.of(raw)).toString();
    assertFalse(text.contains(SECRET), text);
    assertFalse(text.contains("AKIDEXAMPLE"), text);
    assertTrue(text.contains("hidden"), text);
  }

  @Test
  void unknownKeysAreRejected() {
    Map<String, String> raw = minimal();
    raw.put("secret_key", SECRET);
    String message = rejected(raw);
    assertTrue(message.contains("'secret_key'"), message);
    assertTrue(message.contains("secret_access_key"), message);
  }
}
