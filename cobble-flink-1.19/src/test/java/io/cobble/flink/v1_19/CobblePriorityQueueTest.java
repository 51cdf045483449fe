package io.cobble.flink.v1_19;

import io.cobble.flink.state.TestBackends;
import java.nio.file.Path;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.InternalPriorityQueue;
import org.apache.flink.runtime.state.InternalPriorityQueueTestBase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/** Flink's priority queue test base against Cobble's queues (one set per key group in Cobble). */
class CobblePriorityQueueTest extends InternalPriorityQueueTestBase {

  @TempDir Path dir;

  private TestBackends backends;

  @Override
  protected InternalPriorityQueue<TestElement> newPriorityQueue(int initialCapacity) {
    try {
      backends = backends == null ? new TestBackends(dir) : backends;
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

  @AfterEach
  void disposeBackends() throws Exception {
    if (backends != null) {
      backends.close();
    }
  }
}
