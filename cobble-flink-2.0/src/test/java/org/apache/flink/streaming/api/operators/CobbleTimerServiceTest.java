package org.apache.flink.streaming.api.operators;

import io.cobble.flink.state.TestBackends;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collection;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.PriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.AfterEach;

/**
 * Flink's timer service test with timers stored in Cobble. It is package-private and JUnit 5 from
 * Flink 2.0 on, hence this package.
 */
class CobbleTimerServiceTest extends InternalTimerServiceImplTest {

  private final TestBackends backends;

  CobbleTimerServiceTest(int startKeyGroup, int endKeyGroup, int maxParallelism) throws Exception {
    super(startKeyGroup, endKeyGroup, maxParallelism);
    Path dir = Files.createTempDirectory("cobble-timers");
    dir.toFile().deleteOnExit();
    backends = new TestBackends(dir);
  }

  /**
   * The base's key ranges without (0, 10, max 10): a range of 11 key groups under a maximum
   * parallelism of 10 is something only Flink's bare heap queues accept; a keyed backend rejects it
   * when it is built (module README).
   */
  @Parameters(name = "start = {0}, end = {1}, max = {2}")
  public static Collection<Object[]> keyRanges() {
    return Arrays.asList(
        new Object[] {0, Short.MAX_VALUE - 1, (int) Short.MAX_VALUE},
        new Object[] {0, 10, (int) Short.MAX_VALUE},
        new Object[] {10, Short.MAX_VALUE - 1, (int) Short.MAX_VALUE},
        new Object[] {2, 5, 100},
        new Object[] {2, 5, 6});
  }

  /**
   * The test hands one factory to several timer services and expects independent queues from it, as
   * Flink's heap factory gives; a keyed backend returns its one queue per name. So each queue comes
   * from a backend of its own.
   */
  @Override
  protected PriorityQueueSetFactory createQueueFactory(
      KeyGroupRange keyGroupRange, int numKeyGroups) {
    return new PriorityQueueSetFactory() {
      @Override
      public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
          KeyGroupedInternalPriorityQueue<T> create(
              String stateName, TypeSerializer<T> byteOrderedElementSerializer) {
        try {
          return backends
              .create(IntSerializer.INSTANCE, keyGroupRange, numKeyGroups)
              .create(stateName, byteOrderedElementSerializer);
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      }
    };
  }

  @AfterEach
  void disposeBackends() throws Exception {
    backends.close();
  }
}
