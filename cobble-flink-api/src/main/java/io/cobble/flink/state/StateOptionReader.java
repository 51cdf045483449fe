package io.cobble.flink.state;

import java.time.Duration;
import java.util.Optional;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;

/**
 * Reads state-backend options with one error format: every rejection names the full key, the value
 * given and what is allowed.
 */
final class StateOptionReader {
  private final ReadableConfig config;

  StateOptionReader(ReadableConfig config) {
    this.config = config;
  }

  boolean isSet(ConfigOption<?> option) {
    return raw(option).isPresent();
  }

  boolean bool(ConfigOption<Boolean> option) {
    return parsed(option, "allowed values are true, false");
  }

  int intIn(ConfigOption<Integer> option, int min, int max) {
    int value = parsed(option, "expected an integer in " + min + ".." + max);
    if (value < min || value > max) {
      throw invalid(option, "allowed range is " + min + ".." + max);
    }
    return value;
  }

  Optional<Integer> optionalIntIn(ConfigOption<Integer> option, int min, int max) {
    return isSet(option) ? Optional.of(intIn(option, min, max)) : Optional.empty();
  }

  double ratioExclusive(ConfigOption<Double> option) {
    double value = parsed(option, "expected a number between 0 and 1 (both excluded)");
    if (!(value > 0 && value < 1)) {
      throw invalid(option, "expected a number between 0 and 1 (both excluded)");
    }
    return value;
  }

  long bytesIn(ConfigOption<MemorySize> option, long min, long max) {
    String range = sizeText(min) + ".." + sizeText(max);
    MemorySize value = parsed(option, "expected a size such as 64mb in " + range);
    long bytes = value.getBytes();
    if (bytes < min || bytes > max) {
      throw invalid(option, "allowed range is " + range);
    }
    return bytes;
  }

  Duration positiveDuration(ConfigOption<Duration> option) {
    Duration value = parsed(option, "expected a positive duration such as 30s or 5min");
    if (value.isZero() || value.isNegative()) {
      throw invalid(option, "expected a positive duration such as 30s or 5min");
    }
    return value;
  }

  /**
   * The allowed value {@code option} matches, ignoring case, in the spelling of {@code allowed}.
   */
  String choice(ConfigOption<String> option, String... allowed) {
    String value = config.get(option).trim();
    for (String candidate : allowed) {
      if (candidate.equalsIgnoreCase(value)) {
        return candidate;
      }
    }
    throw invalid(option, "allowed values are " + String.join(", ", allowed));
  }

  Optional<String> optionalString(ConfigOption<String> option) {
    return config.getOptional(option).map(String::trim);
  }

  IllegalConfigurationException invalid(ConfigOption<?> option, String expectation) {
    String given = raw(option).orElse(String.valueOf(option.defaultValue()));
    return new IllegalConfigurationException(
        "Invalid value '" + given + "' for " + option.key() + ": " + expectation + ".");
  }

  private <T> T parsed(ConfigOption<T> option, String expectation) {
    try {
      return config.get(option);
    } catch (IllegalArgumentException e) {
      throw invalid(option, expectation);
    }
  }

  /** The value as the user wrote it, whatever type the option has. */
  private Optional<String> raw(ConfigOption<?> option) {
    return config.getOptional(ConfigOptions.key(option.key()).stringType().noDefaultValue());
  }

  private static String sizeText(long bytes) {
    if (bytes >= 1L << 30 && bytes % (1L << 30) == 0) {
      return (bytes >> 30) + "gb";
    }
    if (bytes >= 1L << 20 && bytes % (1L << 20) == 0) {
      return (bytes >> 20) + "mb";
    }
    if (bytes >= 1L << 10 && bytes % (1L << 10) == 0) {
      return (bytes >> 10) + "kb";
    }
    return bytes + " bytes";
  }
}
