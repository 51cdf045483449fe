package io.cobble.it.minicluster;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;

/** A one-TaskManager MiniCluster whose every endpoint is on 127.0.0.1 only. */
final class LoopbackMiniCluster {
  private LoopbackMiniCluster() {}

  static MiniClusterExtension withSlots(int slots) {
    return withSlots(slots, new HashMap<>());
  }

  /** With cluster-level settings too, e.g. those the JobManager reads only from its own. */
  static MiniClusterExtension withSlots(int slots, Map<String, String> cluster) {
    Configuration conf = loopbackOnly();
    conf.addAll(Configuration.fromMap(cluster));
    return new MiniClusterExtension(
        new MiniClusterResourceConfiguration.Builder()
            .setConfiguration(conf)
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(slots)
            .build());
  }

  private static Configuration loopbackOnly() {
    Map<String, String> conf = new HashMap<>();
    for (String key :
        Arrays.asList(
            "rest.address",
            "rest.bind-address",
            "jobmanager.rpc.address",
            "jobmanager.bind-host",
            "taskmanager.host",
            "taskmanager.bind-host")) {
      conf.put(key, "127.0.0.1");
    }
    return Configuration.fromMap(conf);
  }
}
