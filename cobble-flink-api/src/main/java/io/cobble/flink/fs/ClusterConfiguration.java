package io.cobble.flink.fs;

import org.apache.flink.configuration.ConfigConstants;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;

/**
 * The configuration of the Flink cluster this JVM belongs to, read once from {@code FLINK_CONF_DIR}
 * (set by Flink's scripts for every JobManager, TaskManager and SQL Gateway), so that tables reach
 * storage with the cluster's file system settings and credentials without repeating them in DDL.
 * Empty where no configuration directory is set (a MiniCluster in a test or an IDE).
 */
final class ClusterConfiguration {

  private static volatile Configuration loaded;

  private ClusterConfiguration() {}

  static Configuration get() {
    Configuration config = loaded;
    if (config == null) {
      String dir = System.getenv(ConfigConstants.ENV_FLINK_CONF_DIR);
      config = dir == null ? new Configuration() : GlobalConfiguration.loadConfiguration(dir);
      loaded = config;
    }
    return config;
  }
}
