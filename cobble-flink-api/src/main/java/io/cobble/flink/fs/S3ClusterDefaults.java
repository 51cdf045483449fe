package io.cobble.flink.fs;

import io.cobble.storage.StorageOptions;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;

/**
 * The cluster's S3 settings as defaults of Cobble's built-in {@code s3} provider, so a table on
 * {@code s3://} needs no credentials in its DDL when the cluster configuration has Flink's own
 * {@code s3.access-key}, {@code s3.secret-key}, {@code s3.endpoint} and {@code
 * s3.path.style.access}. The table's {@code storage.option.*} keys take precedence; cluster
 * credentials apply only when the table names no credentials of its own, so they never mix with a
 * table's credentials provider or session token.
 */
public final class S3ClusterDefaults {

  private static final String[] TABLE_CREDENTIAL_KEYS = {
    "access_key_id", "secret_access_key", "session_token", "credentials_provider"
  };

  private S3ClusterDefaults() {}

  /** The {@code s3} provider options: the cluster's defaults overridden by the table's. */
  public static StorageOptions withClusterDefaults(StorageOptions table) {
    return fromCluster(ClusterConfiguration.get(), table).overriddenBy(table);
  }

  static StorageOptions fromCluster(Configuration cluster, StorageOptions table) {
    Map<String, String> conf = cluster.toMap();
    Map<String, String> defaults = new TreeMap<>();
    boolean tableHasCredentials = false;
    for (String key : TABLE_CREDENTIAL_KEYS) {
      tableHasCredentials |= table.get(key).isPresent();
    }
    if (!tableHasCredentials) {
      copy(conf, "s3.access-key", defaults, "access_key_id");
      copy(conf, "s3.secret-key", defaults, "secret_access_key");
    }
    copy(conf, "s3.endpoint", defaults, "endpoint");
    String pathStyle = conf.get("s3.path.style.access");
    if (pathStyle != null) {
      defaults.put(
          "enable_virtual_host_style", String.valueOf(!Boolean.parseBoolean(pathStyle.trim())));
    }
    return StorageOptions.of(defaults);
  }

  private static void copy(
      Map<String, String> from, String clusterKey, Map<String, String> to, String providerKey) {
    String value = from.get(clusterKey);
    if (value != null) {
      to.put(providerKey, value.trim());
    }
  }
}
