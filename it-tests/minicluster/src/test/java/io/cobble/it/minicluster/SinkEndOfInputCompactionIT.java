package io.cobble.it.minicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.snapshot.GlobalSnapshot;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.flink.LoopbackMiniCluster;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sink.compact-at-end-of-input}: a bounded INSERT leaves every shard of the committed table
 * without level-0 files (on by default) and the table reads back exactly; turned off, the final
 * flush stays in level 0; a job cancelled while it ends (flushing, merging level 0 or publishing)
 * leaves the table at its last committed snapshot or at the complete new one, never in between.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SinkEndOfInputCompactionIT {

  @RegisterExtension
  static final MiniClusterExtension MINI_CLUSTER = LoopbackMiniCluster.withSlots(4);

  private static final int KEYS = 20_000;

  @TempDir Path dir;

  @BeforeEach
  void reset() {
    MarkLast.EMITTED.set(false);
  }

  @Test
  void aBoundedInsertLeavesNoLevel0FileAndReadsBackExactly() throws Exception {
    Path table = dir.resolve("compacted");
    write(table, "1mb", "", "a", 100_000).await(3, TimeUnit.MINUTES);

    int[] perLevel = filesPerLevel(table);
    assertEquals(0, perLevel[0], "level-0 files of the committed table");
    assertTrue(perLevel[1] >= 2, "both shards hold level-1 files: " + perLevel[1]);
    assertEquals(expected("a", 100_000), read(table));
  }

  @Test
  void turnedOffTheFinalFlushStaysInLevel0() throws Exception {
    Path table = dir.resolve("uncompacted");
    // Buffers that hold the whole input: each writer's only flush is the final one, and a single
    // level-0 file is below the background compaction trigger, so only the end-of-input merge
    // could move it.
    write(table, "64mb", ", 'sink.compact-at-end-of-input' = 'false'", "a", 100_000)
        .await(3, TimeUnit.MINUTES);

    int[] perLevel = filesPerLevel(table);
    assertTrue(perLevel[0] >= 1, "the last memtable of each shard is a level-0 file");
    assertEquals(0, perLevel[1], "nothing was merged below level 0");
    assertEquals(expected("a", 100_000), read(table));
  }

  @Test
  void aJobCancelledWhileItEndsLeavesACommittedTable() throws Exception {
    Path table = dir.resolve("cancelled");
    write(table, "1mb", "", "a", 100_000).await(3, TimeUnit.MINUTES);
    Map<Long, String> first = expected("a", 100_000);
    Map<Long, String> second = new TreeMap<>(first);
    second.putAll(expected("b", 200_000));

    // A large last memtable on top of the first job's files: the end of input has work to do.
    JobClient job = write(table, "64mb", "", "b", 200_000).getJobClient().get();
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    while (!MarkLast.EMITTED.get() && !job.getJobStatus().get().isGloballyTerminalState()) {
      assertTrue(System.nanoTime() < deadline, "the source did not emit its last row in 3 min");
      Thread.sleep(5);
    }
    if (!job.getJobStatus().get().isGloballyTerminalState()) {
      try {
        job.cancel().get(1, TimeUnit.MINUTES);
      } catch (Exception finishedFirst) {
        // The job finished before the cancel reached it: the new table must then be complete.
      }
    }
    JobStatus status = waitForTerminal(job);
    Map<Long, String> stored = read(table);
    System.out.println(
        "SinkEndOfInputCompactionIT: job "
            + status
            + ", the table is the "
            + (stored.equals(second) ? "second" : "first")
            + " job's");
    assertTrue(
        stored.equals(first) || stored.equals(second),
        "the table after a cancel at the end of input is neither the first job's table nor the"
            + " second's ("
            + status
            + ", "
            + stored.size()
            + " rows)");
    if (status == JobStatus.FINISHED) {
      assertEquals(second, stored);
    }
    // Whatever the cancel interrupted, the table is writable again and settles at the end.
    write(table, "8mb", "", "b", 200_000).await(3, TimeUnit.MINUTES);
    assertEquals(second, read(table));
    assertEquals(0, filesPerLevel(table)[0]);
  }

  /**
   * Upserts rows {@code [0, rows)} as {@code (i % KEYS, tag-i)} from one source subtask (so each
   * key's rows arrive in order) into a 4-bucket table of two writers with write buffers of {@code
   * buffer}.
   */
  private static org.apache.flink.table.api.TableResult write(
      Path table, String buffer, String options, String tag, long rows) {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
    tEnv.createTemporaryView(
        "feed",
        tEnv.fromDataStream(
            env.fromSequence(0, rows - 1)
                .setParallelism(1)
                .flatMap(new MarkLast(rows))
                .setParallelism(1)
                .map(i -> Row.of(i % KEYS, tag + "-" + i))
                .returns(Types.ROW_NAMED(new String[] {"id", "name"}, Types.LONG, Types.STRING))
                .setParallelism(1)));
    tEnv.executeSql(
        "CREATE TABLE cobble_sink (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('connector' = 'cobble', 'path' = '"
            + table.toUri()
            + "', 'bucket' = '4', 'sink.parallelism' = '2', 'sink.writer-buffer-memory' = '"
            + buffer
            + "'"
            + options
            + ")");
    return tEnv.executeSql("INSERT INTO cobble_sink SELECT id, name FROM feed");
  }

  private static Map<Long, String> expected(String tag, long rows) {
    Map<Long, String> table = new TreeMap<>();
    for (long i = 0; i < rows; i++) {
      table.put(i % KEYS, tag + "-" + i);
    }
    return table;
  }

  private static Map<Long, String> read(Path table) throws Exception {
    TableEnvironment batch = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    batch.executeSql(
        "CREATE TABLE t (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH"
            + " ('connector' = 'cobble', 'source.kind' = 'sink', 'scan.mode' = 'batch', 'path' = '"
            + table.toUri()
            + "')");
    Map<Long, String> rows = new TreeMap<>();
    try (CloseableIterator<Row> it = batch.executeSql("SELECT id, name FROM t").collect()) {
      while (it.hasNext()) {
        Row row = it.next();
        assertEquals(null, rows.put((Long) row.getField(0), (String) row.getField(1)));
      }
    }
    return rows;
  }

  /** Table files of the current global snapshot in level 0 and in the levels below, all shards. */
  private static int[] filesPerLevel(Path table) throws Exception {
    int[] files = new int[2];
    try (Storage storage = StorageProviders.open(table.toUri(), StorageOptions.empty())) {
      SnapshotStore store = new SnapshotStore(storage);
      GlobalSnapshot global = store.requireGlobal(store.requireCurrentGlobalId());
      for (GlobalSnapshot.Part part : global.parts()) {
        ShardSnapshot shard = store.require(part.shardId(), part.snapshotId());
        for (SnapshotFile f : shard.files()) {
          if (!f.isVlog()) {
            files[f.level() == 0 ? 0 : 1]++;
          }
        }
      }
    }
    return files;
  }

  private static JobStatus waitForTerminal(JobClient job) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (true) {
      JobStatus status = job.getJobStatus().get();
      if (status.isGloballyTerminalState()) {
        return status;
      }
      assertTrue(System.nanoTime() < deadline, "the job did not end within 2 min: " + status);
      Thread.sleep(20);
    }
  }

  /** Passes every number on and records when the last one ({@code rows - 1}) went out. */
  static final class MarkLast extends RichFlatMapFunction<Long, Long> {
    static final AtomicBoolean EMITTED = new AtomicBoolean();
    private final long rows;

    MarkLast(long rows) {
      this.rows = rows;
    }

    @Override
    public void flatMap(Long i, Collector<Long> out) {
      out.collect(i);
      if (i == rows - 1) {
        EMITTED.set(true);
      }
    }
  }
}
