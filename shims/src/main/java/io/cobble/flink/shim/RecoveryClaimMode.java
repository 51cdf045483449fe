package io.cobble.flink.shim;

import java.util.Locale;

/**
 * How a job restored from a checkpoint or savepoint treats its files. Flink calls this {@code
 * RestoreMode} up to 1.19 and {@code RecoveryClaimMode} from 1.20; Cobble keeps its own copy so
 * version-neutral code links on every line.
 */
public enum RecoveryClaimMode {
  CLAIM,
  NO_CLAIM,
  LEGACY;

  /** Parses Flink's configuration value (case-insensitive, as Flink's enum options are). */
  public static RecoveryClaimMode parse(String key, String value) {
    try {
      return valueOf(value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "Invalid value '" + value + "' for '" + key + "': expected CLAIM, NO_CLAIM or LEGACY", e);
    }
  }
}
