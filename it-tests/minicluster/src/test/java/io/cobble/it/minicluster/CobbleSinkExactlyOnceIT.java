package io.cobble.it.minicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.flink.table.codec.RowCodec;
import io.cobble.flink.table.layout.TableLayout;
import io.cobble.reader.Reader;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Exactly-once of the Cobble SQL sink on this line's MiniCluster: a checkpointed streaming job
 * writes a deterministic upsert/delete changelog, its task fails once after two completed
 * checkpoints, the job restarts from the last checkpoint, and the table read through the global
 * snapshot equals the upsert result (no loss, no duplicates, deletes applied).
 */
class CobbleSinkExactlyOnceIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  private static final Path DATA =
      Paths.get(System.getProperty("cobble.it.dataDir", "target/cobble-data"));

  private static final int BUCKETS = 8;
  private static final long CHANGES = 3000;

  private static final RowType ROW_TYPE =
      RowType.of(
          new LogicalType[] {new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
          new String[] {"id", "name"});

  private static long keyOf(long i) {
    return i % 40;
  }

  private static boolean deletes(long i) {
    return i % 7 == 6;
  }

  private static org.apache.flink.types.Row change(long i) {
    return deletes(i)
        ? org.apache.flink.types.Row.ofKind(RowKind.DELETE, keyOf(i), null)
        : org.apache.flink.types.Row.ofKind(RowKind.UPDATE_AFTER, keyOf(i), "v" + i);
  }

  private static Map<Long, String> expected() {
    Map<Long, String> rows = new TreeMap<>();
    for (long i = 0; i < CHANGES; i++) {
      if (deletes(i)) {
        rows.remove(keyOf(i));
      } else {
        rows.put(keyOf(i), "v" + i);
      }
    }
    return rows;
  }

  /** Paces the changelog and fails the task once, after two completed checkpoints. */
  static final class FailOnce extends RichFlatMapFunction<Long, Long>
      implements CheckpointListener {
    static final AtomicBoolean FAILED = new AtomicBoolean();
    private int completed;

    @Override
    public void flatMap(Long i, Collector<Long> out) throws Exception {
      Thread.sleep(1);
      if (completed >= 2 && i >= CHANGES / 2 && FAILED.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure at change " + i);
      }
      out.collect(i);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      completed++;
    }
  }

  @Test
  void upsertsAndDeletesSurviveATaskFailureExactlyOnce() throws Exception {
    Path table = DATA.resolve("sink-exactly-once").toAbsolutePath();
    Map<String, String> conf = new HashMap<>();
    conf.put("restart-strategy.type", "fixed-delay");
    conf.put("restart-strategy.fixed-delay.attempts", "3");
    conf.put("restart-strategy.fixed-delay.delay", "200 ms");
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(conf));
    env.setParallelism(2);
    env.enableCheckpointing(100);
    StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
    tEnv.createTemporaryView(
        "changes",
        tEnv.fromChangelogStream(
            env.fromSequence(0, CHANGES - 1)
                .setParallelism(1)
                .flatMap(new FailOnce())
                .setParallelism(1)
                .map(CobbleSinkExactlyOnceIT::change)
                .returns(Types.ROW_NAMED(new String[] {"id", "name"}, Types.LONG, Types.STRING))
                .setParallelism(1),
            Schema.newBuilder()
                .column("id", "BIGINT NOT NULL")
                .column("name", "STRING")
                .primaryKey("id")
                .build(),
            ChangelogMode.upsert()));
    tEnv.executeSql(
        "CREATE TABLE cobble_sink (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH"
            + " ('connector' = 'cobble', 'path' = '"
            + table.toUri()
            + "', 'bucket' = '"
            + BUCKETS
            + "', 'sink.parallelism' = '3', 'sink.writer-buffer-memory' = '1mb')");
    tEnv.executeSql("INSERT INTO cobble_sink SELECT id, name FROM changes")
        .await(3, TimeUnit.MINUTES);
    assertTrue(FailOnce.FAILED.get(), "the failure was never injected");
    assertEquals(expected(), read(table));
  }

  private static Map<Long, String> read(Path table) throws Exception {
    RowCodec codec = new RowCodec(ROW_TYPE, new int[] {0});
    Map<Long, String> rows = new TreeMap<>();
    try (Storage storage = StorageProviders.open(table.toUri(), StorageOptions.empty());
        Reader reader =
            Reader.open(storage, Config.builder().set("total-buckets", BUCKETS).build())) {
      for (int bucket = 0; bucket < BUCKETS; bucket++) {
        try (ScanCursor cursor =
            reader.scan(bucket, TableLayout.FAMILY, null, null, ScanOptions.DEFAULT)) {
          while (cursor.hasNext()) {
            Row stored = cursor.next();
            RowData row = codec.decode(stored.key(), stored.columns());
            String previous = rows.put(row.getLong(0), row.getString(1).toString());
            assertEquals(null, previous, "key " + row.getLong(0) + " stored twice");
          }
        }
      }
    }
    return rows;
  }
}
