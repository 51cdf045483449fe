package io.cobble.it.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SecretMaskingTest {

  @Test
  void masksValuesOfCredentialKeysOnly() {
    String ddl =
        "CREATE TABLE t (id STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ("
            + "'connector' = 'cobble', 'path' = 's3://b/t',"
            + " 'storage.option.access_key_id' = 'AK1',"
            + " 'storage.option.secret_access_key'='s3cr''et',"
            + " 'password' = 'pw', 'storage.option.region' = 'us-east-1')";
    assertEquals(
        "CREATE TABLE t (id STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ("
            + "'connector' = 'cobble', 'path' = 's3://b/t',"
            + " 'storage.option.access_key_id' = '******',"
            + " 'storage.option.secret_access_key'='******',"
            + " 'password' = '******', 'storage.option.region' = 'us-east-1')",
        SecretMasking.maskOptions(ddl));
  }

  @Test
  void leavesTextWithoutOptionsAlone() {
    String sql = "SELECT 'key', name FROM t WHERE name = 'secret'";
    assertEquals(sql, SecretMasking.maskOptions(sql));
  }
}
