package io.cobble.flink.table.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.reader.Reader;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.S3ProxyServer;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sink on object storage: a real S3Proxy on 127.0.0.1 with authentication on, the table at an
 * {@code s3://} path with {@code storage.option.*}. Writers keep their Db in Flink's temporary
 * directory and upload snapshots; a task failure restores by downloading the shard snapshots, and a
 * changed writer count cuts new ranges from them.
 */
class SinkOnObjectStorageTest {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(4)
              .build());

  private static final int BUCKETS = 8;
  private static final URI TABLE = URI.create("s3://tables/sink");

  private static final RowType ROW_TYPE =
      RowType.of(
          new LogicalType[] {new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
          new String[] {"id", "name"});

  @TempDir Path dir;

  private S3ProxyServer s3;

  @BeforeEach
  void startS3Proxy() throws Exception {
    s3 = S3ProxyServer.start(dir.resolve("blobs"), "tables");
  }

  @AfterEach
  void stopS3Proxy() throws Exception {
    s3.close();
  }

  private String sinkDdl(int writers) {
    StringBuilder ddl =
        new StringBuilder(
            "CREATE TABLE cobble_sink (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED)"
                + " WITH ('connector' = 'cobble', 'path' = '"
                + TABLE
                + "', 'bucket' = '"
                + BUCKETS
                + "', 'sink.parallelism' = '"
                + writers
                + "', 'sink.writer-buffer-memory' = '1mb'"
                + s3.ddlOptions());
    return ddl.append(")").toString();
  }

  @Test
  void writesRestoresAndRescalesOnObjectStorage() throws Exception {
    StreamExecutionEnvironment env = SinkExactlyOnceTest.streaming(100);
    StreamTableEnvironment tEnv =
        SinkExactlyOnceTest.withChanges(
            env, SinkExactlyOnceTest.paced(env, 3000, new SinkExactlyOnceTest.FailOnce()));
    SinkExactlyOnceTest.FailOnce.FAILED.set(false);
    tEnv.executeSql(sinkDdl(3));
    tEnv.executeSql("INSERT INTO cobble_sink SELECT id, name FROM changes")
        .await(3, TimeUnit.MINUTES);
    assertTrue(SinkExactlyOnceTest.FailOnce.FAILED.get(), "the failure was never injected");
    Map<Long, String> expected = SinkExactlyOnceTest.expectedAfter(3000);
    assertEquals(expected, read());

    TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    batch.executeSql(sinkDdl(2));
    batch
        .executeSql("INSERT INTO cobble_sink VALUES (CAST(1000 AS BIGINT), 'rescaled')")
        .await(3, TimeUnit.MINUTES);
    expected.put(1000L, "rescaled");
    assertEquals(expected, read());
    assertNoSecretInFiles();
  }

  private Map<Long, String> read() throws Exception {
    RowCodec codec = new RowCodec(ROW_TYPE, new int[] {0});
    Map<Long, String> rows = new TreeMap<>();
    try (Storage storage = StorageProviders.open(TABLE, StorageOptions.of(s3.clientOptions()));
        Reader reader =
            Reader.open(storage, Config.builder().set("total-buckets", BUCKETS).build())) {
      assertTrue(TableSchemaFile.read(storage).isPresent(), "no inspect schema");
      assertFalse(new SnapshotStore(storage).globalIds().isEmpty());
      for (int bucket = 0; bucket < BUCKETS; bucket++) {
        try (ScanCursor cursor =
            reader.scan(bucket, TableLayout.FAMILY, null, null, ScanOptions.DEFAULT)) {
          while (cursor.hasNext()) {
            Row stored = cursor.next();
            RowData row = codec.decode(stored.key(), stored.columns());
            assertEquals(null, rows.put(row.getLong(0), row.getString(1).toString()));
          }
        }
      }
    }
    return rows;
  }

  /** Neither the stored table nor anything else under the test directory holds the secret. */
  private void assertNoSecretInFiles() throws Exception {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path file : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        String content =
            new String(Files.readAllBytes(file), java.nio.charset.StandardCharsets.ISO_8859_1);
        assertFalse(content.contains(s3.secretKey()), "the secret key is in " + file);
      }
    }
  }
}
