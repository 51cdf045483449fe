package io.cobble.flink.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cobble.storage.StorageOptions;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

/** The cluster's Flink S3 keys as defaults of the built-in s3 provider, the table's keys first. */
class S3ClusterDefaultsTest {

  private static Configuration cluster() {
    Configuration conf = new Configuration();
    conf.setString("s3.access-key", "cluster-access");
    conf.setString("s3.secret-key", "cluster-secret");
    conf.setString("s3.endpoint", "http://127.0.0.1:9000");
    conf.setString("s3.path.style.access", "true");
    return conf;
  }

  private static Map<String, String> merged(Map<String, String> table) {
    StorageOptions options = StorageOptions.of(table);
    return new TreeMap<>(
        S3ClusterDefaults.fromCluster(cluster(), options).overriddenBy(options).asMap());
  }

  @Test
  void aTableWithoutS3OptionsTakesTheClusters() {
    Map<String, String> expected = new TreeMap<>();
    expected.put("access_key_id", "cluster-access");
    expected.put("secret_access_key", "cluster-secret");
    expected.put("endpoint", "http://127.0.0.1:9000");
    expected.put("enable_virtual_host_style", "false");
    assertEquals(expected, merged(Map.of()));
  }

  @Test
  void theTablesOptionsWinKeyByKey() {
    Map<String, String> table = new TreeMap<>();
    table.put("endpoint", "https://s3.example.com");
    table.put("enable_virtual_host_style", "true");
    table.put("region", "eu-west-1");
    Map<String, String> expected = new TreeMap<>(table);
    expected.put("access_key_id", "cluster-access");
    expected.put("secret_access_key", "cluster-secret");
    assertEquals(expected, merged(table));
  }

  /** Credentials come whole from one place: never a cluster key beside a table's provider. */
  @Test
  void aTablesOwnCredentialsKeepTheClustersOut() {
    assertEquals(
        Map.of(
            "credentials_provider", "default",
            "endpoint", "http://127.0.0.1:9000",
            "enable_virtual_host_style", "false"),
        merged(Map.of("credentials_provider", "default")));
    assertEquals(
        Map.of(
            "access_key_id", "table-access",
            "secret_access_key", "table-secret",
            "endpoint", "http://127.0.0.1:9000",
            "enable_virtual_host_style", "false"),
        merged(Map.of("access_key_id", "table-access", "secret_access_key", "table-secret")));
  }

  @Test
  void anEmptyClusterAddsNothing() {
    StorageOptions table = StorageOptions.of(Map.of("region", "us-east-1"));
    assertEquals(StorageOptions.empty(), S3ClusterDefaults.fromCluster(new Configuration(), table));
  }
}
