package io.cobble.flink.state.ha;

import io.cobble.flink.state.CobbleHaOptions;
import java.util.Locale;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;

/** The validated settings of the HA wrapper: which HA services it delegates to. */
public final class HaSettings {

  /** How delegate type NONE is served. */
  public enum NoneMode {
    AUTO,
    STANDALONE,
    EMBEDDED
  }

  /** The delegate's kind. */
  public enum Kind {
    NONE,
    ZOOKEEPER,
    KUBERNETES,
    FACTORY_CLASS
  }

  static final String WRAPPER_CLASS = "io.cobble.flink.state.CobbleHighAvailabilityServicesFactory";

  private final Kind kind;
  private final String type;
  private final NoneMode noneMode;

  private HaSettings(Kind kind, String type, NoneMode noneMode) {
    this.kind = kind;
    this.type = type;
    this.noneMode = noneMode;
  }

  /** Reads and validates the wrapper's options; errors name the option and the fix. */
  public static HaSettings from(Configuration conf) {
    String type = conf.get(CobbleHaOptions.DELEGATE_TYPE).trim();
    String modeValue = conf.get(CobbleHaOptions.DELEGATE_NONE_MODE).trim();
    NoneMode mode;
    try {
      mode = NoneMode.valueOf(modeValue.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalConfigurationException(
          "Invalid value '"
              + modeValue
              + "' for "
              + CobbleHaOptions.DELEGATE_NONE_MODE.key()
              + ": use auto, standalone or embedded.");
    }
    if (type.isEmpty()) {
      throw new IllegalConfigurationException(
          CobbleHaOptions.DELEGATE_TYPE.key()
              + " is empty: set it to NONE, zookeeper, kubernetes or a"
              + " HighAvailabilityServicesFactory class name.");
    }
    if (type.equals(WRAPPER_CLASS)) {
      throw new IllegalConfigurationException(
          CobbleHaOptions.DELEGATE_TYPE.key()
              + " names the Cobble HA wrapper itself; set it to the HA mode the cluster used"
              + " before (NONE, zookeeper, kubernetes or a factory class).");
    }
    switch (type.toUpperCase(Locale.ROOT)) {
      case "NONE":
        return new HaSettings(Kind.NONE, "NONE", mode);
      case "ZOOKEEPER":
        return new HaSettings(Kind.ZOOKEEPER, "zookeeper", mode);
      case "KUBERNETES":
        return new HaSettings(Kind.KUBERNETES, "kubernetes", mode);
      default:
        if (!type.contains(".")) {
          throw new IllegalConfigurationException(
              "Invalid value '"
                  + type
                  + "' for "
                  + CobbleHaOptions.DELEGATE_TYPE.key()
                  + ": use NONE, zookeeper, kubernetes or the fully qualified class name of a"
                  + " HighAvailabilityServicesFactory.");
        }
        return new HaSettings(Kind.FACTORY_CLASS, type, mode);
    }
  }

  public Kind kind() {
    return kind;
  }

  /** The value {@code high-availability.type} takes for the delegate. */
  public String type() {
    return type;
  }

  public NoneMode noneMode() {
    return noneMode;
  }
}
