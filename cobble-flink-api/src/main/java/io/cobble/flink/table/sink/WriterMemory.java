package io.cobble.flink.table.sink;

import io.cobble.flink.ShimLoader;
import io.cobble.flink.table.CobbleSinkOptions;
import java.io.Serializable;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.core.memory.ManagedMemoryUseCase;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.memory.MemoryManager;
import org.apache.flink.runtime.memory.MemoryReservationException;
import org.apache.flink.streaming.api.graph.StreamConfig;

/**
 * Where a sink writer's write-buffer budget comes from. By default it is {@code
 * sink.writer-buffer-memory}. With {@code sink.use-managed-memory-allocator} the writer declares an
 * operator-scope managed memory use case (weighted by {@code sink.writer-buffer-memory} in MiB, so
 * writers share a slot's managed memory with other operators in that proportion), and its budget is
 * the share Flink assigns it, reserved in the slot's {@link MemoryManager} so that no other
 * consumer gets it, and released when the writer closes. The engine still buffers on the JVM heap:
 * the reservation is accounting, which is why the budget comes out of managed memory only when the
 * user asks for it.
 */
final class WriterMemory implements Serializable {

  private static final long serialVersionUID = 1L;

  private final long configuredBytes;
  private final boolean managed;

  WriterMemory(long configuredBytes, boolean managed) {
    this.configuredBytes = configuredBytes;
    this.managed = managed;
  }

  boolean managed() {
    return managed;
  }

  /** Declares the writer's managed memory use case on its transformation, when managed. */
  void declareOn(Transformation<?> writer) {
    if (managed) {
      int weightMebibytes = (int) Math.max(1, Math.min(Integer.MAX_VALUE, configuredBytes >> 20));
      writer.declareManagedMemoryUseCaseAtOperatorScope(
          ManagedMemoryUseCase.OPERATOR, weightMebibytes);
    }
  }

  /**
   * The writer's buffer budget in bytes: the configured one, or its managed memory share, which is
   * then reserved for {@code owner} until {@link #release}.
   */
  long acquire(StreamConfig operatorConfig, Environment environment, Object owner)
      throws MemoryReservationException {
    if (!managed) {
      return configuredBytes;
    }
    double fraction =
        ShimLoader.current()
            .operatorManagedMemoryFraction(
                operatorConfig,
                environment.getJobConfiguration(),
                environment.getTaskManagerInfo().getConfiguration(),
                environment.getUserCodeClassLoader().asClassLoader());
    MemoryManager memory = environment.getMemoryManager();
    long share = memory.computeMemorySize(fraction);
    if (share <= 0) {
      throw new IllegalStateException(
          "Option '"
              + CobbleSinkOptions.SINK_USE_MANAGED_MEMORY_ALLOCATOR.key()
              + "' is true but the sink writer's share of the slot's managed memory is 0 bytes"
              + " (slot managed memory "
              + memory.getMemorySize()
              + " bytes, fraction "
              + fraction
              + "). Give the TaskManagers managed memory (taskmanager.memory.managed.size or"
              + " .fraction) or set the option to false to use 'sink.writer-buffer-memory'.");
    }
    memory.reserveMemory(owner, share);
    return share;
  }

  /** Gives back what {@link #acquire} reserved for {@code owner}. */
  void release(Environment environment, Object owner, long acquired) {
    if (managed && acquired > 0) {
      environment.getMemoryManager().releaseMemory(owner, acquired);
    }
  }
}
