package io.cobble.flink.state.ha;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cobble.flink.state.CobbleHaOptions;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.UnmodifiableConfiguration;
import org.junit.jupiter.api.Test;

/** The wrapper's options: defaults, accepted spellings, and errors that name the key. */
class HaSettingsTest {

  @Test
  void defaultsToNoneInAutoMode() {
    HaSettings s = HaSettings.from(new Configuration());
    assertThat(s.kind()).isEqualTo(HaSettings.Kind.NONE);
    assertThat(s.noneMode()).isEqualTo(HaSettings.NoneMode.AUTO);
    assertThat(s.type()).isEqualTo("NONE");
  }

  @Test
  void namesTheDelegateAsHighAvailabilityTypeWould() {
    assertThat(settings("ZooKeeper", "standalone").type()).isEqualTo("zookeeper");
    assertThat(settings("kubernetes", "auto").kind()).isEqualTo(HaSettings.Kind.KUBERNETES);
    assertThat(settings("none", "EMBEDDED").noneMode()).isEqualTo(HaSettings.NoneMode.EMBEDDED);
    HaSettings custom = settings("com.example.MyHaFactory", "auto");
    assertThat(custom.kind()).isEqualTo(HaSettings.Kind.FACTORY_CLASS);
    assertThat(custom.type()).isEqualTo("com.example.MyHaFactory");
  }

  @Test
  void badValuesNameTheKey() {
    assertThatThrownBy(() -> settings("zookeper", "auto"))
        .isInstanceOf(IllegalConfigurationException.class)
        .hasMessageContaining("cobble.ha.delegate.type")
        .hasMessageContaining("zookeper");
    assertThatThrownBy(() -> settings("NONE", "remote"))
        .isInstanceOf(IllegalConfigurationException.class)
        .hasMessageContaining("cobble.ha.delegate.none-mode")
        .hasMessageContaining("remote");
    assertThatThrownBy(
            () -> settings("io.cobble.flink.state.CobbleHighAvailabilityServicesFactory", "auto"))
        .isInstanceOf(IllegalConfigurationException.class)
        .hasMessageContaining("names the Cobble HA wrapper itself");
    assertThatThrownBy(() -> settings(" ", "auto"))
        .isInstanceOf(IllegalConfigurationException.class)
        .hasMessageContaining("cobble.ha.delegate.type is empty");
  }

  @Test
  void explicitModesDecideEmbeddingAndAutoFollowsTheConfigurationHandedOver() {
    Configuration entrypoint = new Configuration();
    Configuration miniCluster = new UnmodifiableConfiguration(entrypoint);
    for (Configuration conf : List.of(entrypoint, miniCluster)) {
      assertThat(HaDelegates.embedded(HaSettings.NoneMode.EMBEDDED, conf)).isTrue();
      assertThat(HaDelegates.embedded(HaSettings.NoneMode.STANDALONE, conf)).isFalse();
    }
    assertThat(HaDelegates.embedded(HaSettings.NoneMode.AUTO, entrypoint)).isFalse();
    assertThat(HaDelegates.embedded(HaSettings.NoneMode.AUTO, miniCluster)).isTrue();
  }

  private static HaSettings settings(String type, String mode) {
    Configuration conf = new Configuration();
    conf.set(CobbleHaOptions.DELEGATE_TYPE, type);
    conf.set(CobbleHaOptions.DELEGATE_NONE_MODE, mode);
    return HaSettings.from(conf);
  }
}
