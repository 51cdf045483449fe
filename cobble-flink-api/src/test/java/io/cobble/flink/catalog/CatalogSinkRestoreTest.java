package io.cobble.flink.catalog;

import static io.cobble.flink.catalog.CatalogSql.batch;
import static io.cobble.flink.catalog.CatalogSql.collect;
import static io.cobble.flink.catalog.CatalogSql.session;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Collections;
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
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A catalog table's sink restores after a task failure with its writer parallelism: a checkpointed
 * upsert changelog (with deletes) into the table, a failure injected after two checkpoints, and the
 * table then holds exactly the changelog's result.
 */
class CatalogSinkRestoreTest {

  private static final long CHANGES = 2000;

  @TempDir Path dir;

  /**
   * Paces the changelog and fails the task once, after two completed checkpoints. Until then the
   * second half is held back (up to 50 s): on a loaded machine the writers may start so late that
   * the whole input passed before any checkpoint completed, and the failure never came. Barriers
   * and completion notices pass between records.
   */
  static final class FailOnce extends RichFlatMapFunction<Long, Long>
      implements CheckpointListener {
    static final AtomicBoolean FAILED = new AtomicBoolean();
    private int completed;

    @Override
    public void flatMap(Long i, Collector<Long> out) throws Exception {
      Thread.sleep(1);
      if (i >= CHANGES / 2 && !FAILED.get()) {
        if (completed >= 2) {
          FAILED.set(true);
          throw new IllegalStateException("injected failure at change " + i);
        }
        Thread.sleep(50);
      }
      out.collect(i);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      completed++;
    }
  }

  private static Row change(long i) {
    return i % 7 == 6
        ? Row.ofKind(RowKind.DELETE, i % 40, null)
        : Row.ofKind(RowKind.UPDATE_AFTER, i % 40, "v" + i);
  }

  @Test
  void theSinkRestoresWithItsWriterParallelism() throws Exception {
    String warehouse = dir.resolve("wh").toUri().toString();
    TableEnvironment setup = session(batch(), "lake", warehouse, 4, Collections.emptyMap());
    setup.executeSql(
        "CREATE TABLE kv (id BIGINT NOT NULL, name STRING, PRIMARY KEY (id) NOT ENFORCED)");

    FailOnce.FAILED.set(false);
    Configuration conf = new Configuration();
    conf.setString("restart-strategy.type", "fixed-delay");
    conf.setString("restart-strategy.fixed-delay.attempts", "3");
    conf.setString("restart-strategy.fixed-delay.delay", "200 ms");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    env.enableCheckpointing(100);
    StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
    session(tEnv, "lake", warehouse, 4, Collections.emptyMap());
    tEnv.createTemporaryView(
        "changes",
        tEnv.fromChangelogStream(
            env.fromSequence(0, CHANGES - 1)
                .setParallelism(1)
                .flatMap(new FailOnce())
                .setParallelism(1)
                .map(CatalogSinkRestoreTest::change)
                .returns(Types.ROW_NAMED(new String[] {"id", "name"}, Types.LONG, Types.STRING))
                .setParallelism(1),
            Schema.newBuilder()
                .column("id", "BIGINT NOT NULL")
                .column("name", "STRING")
                .primaryKey("id")
                .build(),
            ChangelogMode.upsert()));
    tEnv.executeSql(
            "INSERT INTO kv /*+ OPTIONS('sink.parallelism' = '2') */ SELECT id, name FROM changes")
        .await(3, TimeUnit.MINUTES);
    assertTrue(FailOnce.FAILED.get(), "the failure was never injected");

    Map<Long, String> expected = new TreeMap<>();
    for (long i = 0; i < CHANGES; i++) {
      if (i % 7 == 6) {
        expected.remove(i % 40);
      } else {
        expected.put(i % 40, "v" + i);
      }
    }
    Map<Long, String> actual = new TreeMap<>();
    for (Row row : collect(setup, "SELECT id, name FROM kv")) {
      actual.put((Long) row.getField(0), (String) row.getField(1));
    }
    assertEquals(expected, actual);
  }
}
