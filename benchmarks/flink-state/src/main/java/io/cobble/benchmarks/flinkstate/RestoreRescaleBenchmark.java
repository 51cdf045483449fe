package io.cobble.benchmarks.flinkstate;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.state.benchmark.RescalingBenchmark;
import org.apache.flink.state.benchmark.RescalingBenchmarkBuilder;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.Collector;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Restore and rescale of one keyed operator, timed per restore, through Flink's {@code
 * RescalingBenchmark} (the harness of apache/flink-benchmarks' rescaling executors): the trial
 * writes about 1 GB of state at the old parallelism (10 M keys × a 100-byte value; {@code
 * -Dbench.rescale.keys} changes the count) and checkpoints it; each invocation restores one subtask
 * of the new parallelism from that checkpoint. RESTORE_2_2 restores subtask 0 of 2 (its own key
 * groups), RESCALE_2_3 subtask 1 of 3, whose key groups come from both old subtasks. ROCKSDB uses
 * incremental checkpoints; COBBLE is built like the state benchmarks' COBBLE type.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch", "-XX:+UseParallelGC"})
@Warmup(iterations = 1)
@Measurement(iterations = 5)
public class RestoreRescaleBenchmark {
  private static final int VALUE_BYTES = 100;

  /** Parallelism before, after, and the restored subtask. */
  public enum Shape {
    RESTORE_2_2(2, 2, 0),
    RESCALE_2_3(2, 3, 1);

    final int before;
    final int after;
    final int subtask;

    Shape(int before, int after, int subtask) {
      this.before = before;
      this.after = after;
      this.subtask = subtask;
    }
  }

  @Param({"ROCKSDB", "COBBLE"})
  public String backendType;

  @Param({"RESTORE_2_2", "RESCALE_2_3"})
  public Shape shape;

  private RescalingBenchmark<Long> benchmark;
  private Path workDir;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    File parent =
        new File(System.getProperty("bench.state.dir", System.getProperty("java.io.tmpdir")));
    Files.createDirectories(parent.toPath());
    workDir = Files.createTempDirectory(parent.toPath(), "restore-rescale-");
    long keys = Long.getLong("bench.rescale.keys", 10_000_000L);
    benchmark =
        new RescalingBenchmarkBuilder<Long>()
            .setMaxParallelism(128)
            .setParallelismBefore(shape.before)
            .setParallelismAfter(shape.after)
            .setManagedMemorySize(512 * 1024 * 1024)
            .setCheckpointStorageAccess(
                new FileSystemCheckpointStorage(workDir.resolve("checkpoints").toUri(), 0)
                    .createCheckpointStorage(new JobID()))
            .setStateBackend(stateBackend())
            .setStreamRecordGenerator(new KeyGenerator(keys))
            .setStateProcessFunctionSupplier(ValueWriter::new)
            .build();
    benchmark.setUp();
  }

  private StateBackend stateBackend() throws Exception {
    switch (backendType) {
      case "ROCKSDB":
        return BenchmarkBackend.rocksDbIncremental();
      case "COBBLE":
        return BenchmarkBackend.cobbleStateBackend(
            Files.createDirectories(workDir.resolve("cobble-local")));
      default:
        throw new IllegalArgumentException(
            "backendType " + backendType + ": use ROCKSDB or COBBLE");
    }
  }

  @Setup(Level.Invocation)
  public void prepareSubtask() throws Exception {
    benchmark.prepareStateForOperator(shape.subtask);
  }

  @Benchmark
  public void restore() throws Exception {
    benchmark.rescale();
  }

  @TearDown(Level.Invocation)
  public void closeSubtask() throws Exception {
    benchmark.closeOperator();
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    benchmark.tearDown();
    try (java.util.stream.Stream<Path> files = Files.walk(workDir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /** Keys 0..n-1, each once. */
  static final class KeyGenerator implements RescalingBenchmark.StreamRecordGenerator<Long> {
    private final long keys;

    KeyGenerator(long keys) {
      this.keys = keys;
    }

    @Override
    public Iterator<StreamRecord<Long>> generate() {
      return new Iterator<StreamRecord<Long>>() {
        private long next;

        @Override
        public boolean hasNext() {
          return next < keys;
        }

        @Override
        public StreamRecord<Long> next() {
          if (!hasNext()) {
            throw new NoSuchElementException();
          }
          return new StreamRecord<>(next++);
        }
      };
    }

    @Override
    public TypeInformation<Long> getTypeInformation() {
      return Types.LONG;
    }
  }

  /** Stores a random 100-byte value under each key it sees. */
  static final class ValueWriter extends KeyedProcessFunction<Long, Long, Void> {
    private static final long serialVersionUID = 1L;
    private transient ValueState<byte[]> value;
    private transient Random random;

    @Override
    public void open(OpenContext openContext) {
      value =
          getRuntimeContext()
              .getState(
                  new ValueStateDescriptor<>(
                      "value", PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
      random = new Random(7);
    }

    @Override
    public void processElement(Long key, Context ctx, Collector<Void> out) throws Exception {
      byte[] bytes = new byte[VALUE_BYTES];
      random.nextBytes(bytes);
      value.update(bytes);
    }
  }
}
