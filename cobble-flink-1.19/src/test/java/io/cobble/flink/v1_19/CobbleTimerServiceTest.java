package io.cobble.flink.v1_19;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.PriorityQueueSetFactory;
import org.apache.flink.streaming.api.operators.InternalTimerServiceImplTest;
import org.junit.After;

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

  @Override
  protected PriorityQueueSetFactory createQueueFactory(
      KeyGroupRange keyGroupRange, int numKeyGroups) {
    try {
      // Some parameter rows give a range that ends at the key group count; Flink's heap queues
      // accept it, a keyed backend does not.
      int keyGroups = Math.max(numKeyGroups, keyGroupRange.getEndKeyGroup() + 1);
      return backends.create(IntSerializer.INSTANCE, keyGroupRange, keyGroups);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @After
  public void disposeBackends() throws Exception {
    backends.close();
  }
}
