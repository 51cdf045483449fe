package io.cobble.flink.state;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/**
 * Options of the Cobble HA wrapper ({@link CobbleHighAvailabilityServicesFactory}), set in the
 * cluster configuration next to {@code high-availability.type}.
 */
public final class CobbleHaOptions {

  public static final ConfigOption<String> DELEGATE_TYPE =
      ConfigOptions.key("cobble.ha.delegate.type")
          .stringType()
          .defaultValue("NONE")
          .withDescription(
              "The HA services the wrapper delegates to, as high-availability.type would name"
                  + " them: NONE, zookeeper, kubernetes, or the class name of a"
                  + " HighAvailabilityServicesFactory.");

  public static final ConfigOption<String> DELEGATE_NONE_MODE =
      ConfigOptions.key("cobble.ha.delegate.none-mode")
          .stringType()
          .defaultValue("auto")
          .withDescription(
              "How delegate type NONE is served: standalone (a standalone cluster's fixed"
                  + " JobManager address), embedded (in-process, as a MiniCluster runs), or auto"
                  + " (embedded inside a MiniCluster, standalone otherwise).");

  private CobbleHaOptions() {}
}
