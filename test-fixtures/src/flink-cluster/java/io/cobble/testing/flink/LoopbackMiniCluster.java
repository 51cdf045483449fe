package io.cobble.testing.flink;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;

/** A one-TaskManager MiniCluster whose every endpoint is on 127.0.0.1 only. */
public final class LoopbackMiniCluster {
  private LoopbackMiniCluster() {}

  public static MiniClusterExtension withSlots(int slots) {
    return withSlots(slots, new HashMap<>());
  }

  /** The same with {@code extra} cluster settings (a metric reporter, for example). */
  public static MiniClusterExtension withSlots(int slots, Map<String, String> extra) {
    Configuration conf = Configuration.fromMap(settings());
    conf.addAll(Configuration.fromMap(extra));
    return new MiniClusterExtension(
        new MiniClusterResourceConfiguration.Builder()
            .setConfiguration(conf)
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(slots)
            .build());
  }

  /** The settings that keep every endpoint of a cluster on 127.0.0.1. */
  public static Map<String, String> settings() {
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
    return conf;
  }

}
