package io.cobble.flink.state.ha;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cobble.flink.state.CobbleHaOptions;
import io.cobble.flink.state.CobbleHighAvailabilityServicesFactory;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.UnmodifiableConfiguration;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStore;
import org.apache.flink.runtime.highavailability.HighAvailabilityServices;
import org.apache.flink.runtime.jobgraph.RestoreMode;
import org.apache.flink.runtime.leaderretrieval.LeaderRetrievalListener;
import org.apache.flink.runtime.leaderretrieval.LeaderRetrievalService;
import org.apache.flink.runtime.leaderretrieval.StandaloneLeaderRetrievalService;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * The factory builds the delegate the options name and wraps each job's checkpoint store:
 * standalone mode serves the configured JobManager address as Flink's NONE mode does, embedded mode
 * does not; invalid options fail before anything is built.
 */
class CobbleHaFactoryTest {

  @Test
  void standaloneModeServesTheConfiguredJobManagerAndWrapsTheCheckpointStore() throws Exception {
    Configuration conf = new Configuration();
    conf.set(CobbleHaOptions.DELEGATE_NONE_MODE, "standalone");
    conf.set(JobManagerOptions.ADDRESS, "127.0.0.1");
    conf.set(JobManagerOptions.PORT, 16123);
    HighAvailabilityServices ha =
        new CobbleHighAvailabilityServicesFactory()
            .createHAServices(conf, Executors.directExecutor());
    try {
      LeaderRetrievalService rm = ha.getResourceManagerLeaderRetriever();
      assertThat(rm).isInstanceOf(StandaloneLeaderRetrievalService.class);
      AtomicReference<String> address = new AtomicReference<>();
      rm.start(
          new LeaderRetrievalListener() {
            @Override
            public void notifyLeaderAddress(String leaderAddress, UUID leaderSessionID) {
              address.set(leaderAddress);
            }

            @Override
            public void handleError(Exception exception) {}
          });
      assertThat(address.get()).contains("127.0.0.1:16123").contains("resourcemanager");
      rm.stop();
      assertThat(store(ha)).isInstanceOf(SidecarCheckpointStore.class);
    } finally {
      ha.closeAndCleanupAllData();
    }
  }

  @Test
  void embeddedModeIsNotStandalone() throws Exception {
    Configuration conf = new Configuration();
    conf.set(CobbleHaOptions.DELEGATE_NONE_MODE, "embedded");
    HighAvailabilityServices ha =
        new CobbleHighAvailabilityServicesFactory()
            .createHAServices(conf, Executors.directExecutor());
    try {
      assertThat(ha.getResourceManagerLeaderRetriever())
          .isNotInstanceOf(StandaloneLeaderRetrievalService.class);
      assertThat(store(ha)).isInstanceOf(SidecarCheckpointStore.class);
    } finally {
      ha.closeAndCleanupAllData();
    }
  }

  /**
   * Auto mode follows what the caller hands over: a MiniCluster passes its unmodifiable
   * configuration (embedded), a standalone entrypoint its own mutable one (standalone).
   */
  @Test
  void autoModeIsEmbeddedForTheMiniClusterConfigurationAndStandaloneOtherwise() throws Exception {
    Configuration conf = new Configuration();
    conf.set(JobManagerOptions.ADDRESS, "127.0.0.1");
    conf.set(JobManagerOptions.PORT, 16123);
    HighAvailabilityServices standalone =
        new CobbleHighAvailabilityServicesFactory()
            .createHAServices(conf, Executors.directExecutor());
    try {
      assertThat(standalone.getResourceManagerLeaderRetriever())
          .isInstanceOf(StandaloneLeaderRetrievalService.class);
    } finally {
      standalone.closeAndCleanupAllData();
    }
    HighAvailabilityServices embedded =
        new CobbleHighAvailabilityServicesFactory()
            .createHAServices(new UnmodifiableConfiguration(conf), Executors.directExecutor());
    try {
      assertThat(embedded.getResourceManagerLeaderRetriever())
          .isNotInstanceOf(StandaloneLeaderRetrievalService.class);
    } finally {
      embedded.closeAndCleanupAllData();
    }
  }

  @Test
  void invalidOptionsFailBeforeAnythingIsBuilt() {
    Configuration conf = new Configuration();
    conf.set(CobbleHaOptions.DELEGATE_TYPE, "etcd");
    assertThatThrownBy(
            () ->
                new CobbleHighAvailabilityServicesFactory()
                    .createHAServices(conf, Executors.directExecutor()))
        .isInstanceOf(IllegalConfigurationException.class)
        .hasMessageContaining("cobble.ha.delegate.type");
  }

  private static CompletedCheckpointStore store(HighAvailabilityServices ha) throws Exception {
    return ha.getCheckpointRecoveryFactory()
        .createRecoveredCompletedCheckpointStore(
            new JobID(),
            1,
            SharedStateRegistry.DEFAULT_FACTORY,
            Executors.directExecutor(),
            RestoreMode.CLAIM);
  }
}
