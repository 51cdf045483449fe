package io.cobble.flink.state;

import io.cobble.flink.state.ha.HaDelegates;
import io.cobble.flink.state.ha.HaSettings;
import io.cobble.flink.state.ha.SidecarHaServices;
import java.util.concurrent.Executor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.highavailability.ClientHighAvailabilityServices;
import org.apache.flink.runtime.highavailability.HighAvailabilityServices;
import org.apache.flink.runtime.highavailability.HighAvailabilityServicesFactory;

/**
 * The Cobble HA wrapper, set as {@code high-availability.type}: Flink's HA services as named by
 * {@code cobble.ha.delegate.type} ({@link CobbleHaOptions}), which additionally keep the Cobble
 * sidecars next to every retained checkpoint, so tools open Cobble state without decoding Flink's
 * {@code _metadata}.
 */
public final class CobbleHighAvailabilityServicesFactory
    implements HighAvailabilityServicesFactory {

  @Override
  public HighAvailabilityServices createHAServices(Configuration configuration, Executor executor)
      throws Exception {
    HaSettings settings = HaSettings.from(configuration);
    return SidecarHaServices.wrap(HaDelegates.create(settings, configuration, executor));
  }

  @Override
  public ClientHighAvailabilityServices createClientHAServices(Configuration configuration)
      throws Exception {
    return HaDelegates.createClient(HaSettings.from(configuration), configuration);
  }
}
