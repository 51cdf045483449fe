package io.cobble.flink.v1_19;

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
import org.apache.flink.streaming.api.operators.InternalTimerServiceImplTest;
import org.junit.After;
import org.junit.runners.Parameterized;

/** Flink's timer service test (JUnit 4 on this line) with timers stored in Cobble. */
public class CobbleTimerServiceTest extends InternalTimerServiceImplTest {

  private final TestBackends backends;

  public CobbleTimerServiceTest(int startKeyGroup, int endKeyGroup, int maxParallelism)
      throws Exception {
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
  @Parameterized.Parameters(name = "start = {0}, end = {1}, max = {2}")
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

  @After
  public void disposeBackends() throws Exception {
    backends.close();
  }
}
