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
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
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
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;
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

  private static final String ACCESS_KEY = "cobble-sink-access";
  private static final String SECRET_KEY = "Sink-S3cret-do-not-leak-91c2";
  private static final int BUCKETS = 8;
  private static final URI TABLE = URI.create("s3://tables/sink");

  private static final RowType ROW_TYPE =
      RowType.of(
          new LogicalType[] {new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
          new String[] {"id", "name"});

  @TempDir Path dir;

  private S3Proxy proxy;

  @BeforeEach
  void startS3Proxy() throws Exception {
    Path blobs = dir.resolve("blobs");
    Files.createDirectories(blobs);
    BlobStore store = new FilesystemNio2BlobStore(blobs.toString());
    store.createContainer("tables");
    proxy =
        S3Proxy.builder()
            .blobStore(store)
            .endpoint(URI.create("http://127.0.0.1:0"))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
            .build();
    proxy.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!"STARTED".equals(proxy.getState()) && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertEquals("STARTED", proxy.getState());
  }

  @AfterEach
  void stopS3Proxy() throws Exception {
    proxy.stop();
  }

  private Map<String, String> storageOptions() {
    Map<String, String> options = new HashMap<>();
    options.put("endpoint", "http://127.0.0.1:" + proxy.getPort());
    options.put("region", "us-east-1");
    options.put("access_key_id", ACCESS_KEY);
    options.put("secret_access_key", SECRET_KEY);
    options.put("enable_virtual_host_style", "false");
    return options;
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
                + "', 'sink.writer-buffer-memory' = '1mb'");
    storageOptions()
        .forEach(
            (k, v) ->
                ddl.append(", 'storage.option.").append(k).append("' = '").append(v).append("'"));
    return ddl.append(")").toString();
  }

  @Test
  void writesRestoresAndRescalesOnObjectStorage() throws Exception {
    Configuration conf = new Configuration();
    conf.setString("restart-strategy.type", "fixed-delay");
    conf.setString("restart-strategy.fixed-delay.attempts", "3");
    conf.setString("restart-strategy.fixed-delay.delay", "200 ms");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    env.enableCheckpointing(100);
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
    try (Storage storage = StorageProviders.open(TABLE, StorageOptions.of(storageOptions()));
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
        assertFalse(content.contains(SECRET_KEY), "the secret key is in " + file);
      }
    }
  }
}
