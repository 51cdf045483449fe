package io.cobble.flink.v1_17;

import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.InternalPriorityQueue;
import org.apache.flink.runtime.state.InternalPriorityQueueTestBase;
import org.junit.After;
import org.junit.Rule;
import org.junit.rules.TemporaryFolder;

/** Flink's priority queue test base against Cobble's queues (one set per key group in Cobble). */
public class CobblePriorityQueueTest extends InternalPriorityQueueTestBase {

  @Rule public final TemporaryFolder temp = new TemporaryFolder();

  private TestBackends backends;

  @Override
  protected InternalPriorityQueue<TestElement> newPriorityQueue(int initialCapacity) {
    try {
      backends = backends == null ? new TestBackends(temp.getRoot().toPath()) : backends;
      return backends
          .create(LongSerializer.INSTANCE, KEY_GROUP_RANGE, KEY_GROUP_RANGE.getNumberOfKeyGroups())
          .create("queue", TestElementSerializer.INSTANCE);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Override
  protected boolean testSetSemanticsAgainstDuplicateElements() {
    return true;
  }

  @After
  public void disposeBackends() throws Exception {
    if (backends != null) {
      backends.close();
    }
  }
}
