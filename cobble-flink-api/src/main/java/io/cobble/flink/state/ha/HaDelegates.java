package io.cobble.flink.state.ha;

import java.util.concurrent.Executor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.HighAvailabilityOptions;
import org.apache.flink.configuration.UnmodifiableConfiguration;
import org.apache.flink.runtime.highavailability.ClientHighAvailabilityServices;
import org.apache.flink.runtime.highavailability.HighAvailabilityServices;
import org.apache.flink.runtime.highavailability.HighAvailabilityServicesUtils;
import org.apache.flink.runtime.highavailability.nonha.embedded.EmbeddedHaServices;
import org.apache.flink.runtime.rpc.AddressResolution;
import org.apache.flink.runtime.rpc.FatalErrorHandler;
import org.apache.flink.runtime.rpc.RpcSystem;
import org.apache.flink.util.FatalExitExceptionHandler;

/**
 * Builds the HA services the wrapper delegates to, the way Flink builds them for the same {@code
 * high-availability.type} (HighAvailabilityServicesUtils), except NONE in embedded mode, which is
 * what Flink's MiniCluster uses.
 */
public final class HaDelegates {

  /** A fatal HA error (lost leadership store) ends the process, as in Flink's entrypoints. */
  private static final FatalErrorHandler FATAL =
      t -> FatalExitExceptionHandler.INSTANCE.uncaughtException(Thread.currentThread(), t);

  private HaDelegates() {}

  public static HighAvailabilityServices create(
      HaSettings settings, Configuration conf, Executor executor) throws Exception {
    if (settings.kind() == HaSettings.Kind.NONE && embedded(settings.noneMode(), conf)) {
      return new EmbeddedHaServices(executor);
    }
    Configuration delegate = delegateConfig(settings, conf);
    if (settings.kind() != HaSettings.Kind.NONE) {
      // Only the standalone services compute RPC addresses.
      return HighAvailabilityServicesUtils.createHighAvailabilityServices(
          delegate, executor, AddressResolution.NO_ADDRESS_RESOLUTION, null, FATAL);
    }
    try (RpcSystem rpc = RpcSystem.load(delegate)) {
      return HighAvailabilityServicesUtils.createHighAvailabilityServices(
          delegate, executor, AddressResolution.NO_ADDRESS_RESOLUTION, rpc, FATAL);
    }
  }

  public static ClientHighAvailabilityServices createClient(HaSettings settings, Configuration conf)
      throws Exception {
    return HighAvailabilityServicesUtils.createClientHAService(
        delegateConfig(settings, conf), FATAL);
  }

  private static Configuration delegateConfig(HaSettings settings, Configuration conf) {
    Configuration delegate = new Configuration(conf);
    delegate.set(HighAvailabilityOptions.HA_MODE, settings.type());
    return delegate;
  }

  /**
   * Auto: Flink's MiniCluster builds its HA services from the configuration its {@code
   * MiniClusterConfiguration} holds, which is always an {@link UnmodifiableConfiguration} (1.17
   * through 2.3), and hands that very object to a custom factory; the standalone entrypoints
   * (JobManager and TaskManager) hand over their own mutable configuration.
   */
  static boolean embedded(HaSettings.NoneMode mode, Configuration conf) {
    switch (mode) {
      case EMBEDDED:
        return true;
      case STANDALONE:
        return false;
      default:
        return conf instanceof UnmodifiableConfiguration;
    }
  }
}
