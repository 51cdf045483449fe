package io.cobble.flink.table;

import java.util.Locale;
import org.apache.flink.table.api.ValidationException;

/** The values of {@code scan.mode}. */
public enum ScanMode {
  BATCH,
  STREAMING;

  public String optionValue() {
    return name().toLowerCase(Locale.ROOT);
  }

  static ScanMode parse(String value) {
    for (ScanMode mode : values()) {
      if (mode.optionValue().equalsIgnoreCase(value.trim())) {
        return mode;
      }
    }
    throw new ValidationException(
        "Option '"
            + CobbleSourceOptions.SCAN_MODE.key()
            + "' must be 'batch' or 'streaming', but is '"
            + value
            + "'.");
  }
}
