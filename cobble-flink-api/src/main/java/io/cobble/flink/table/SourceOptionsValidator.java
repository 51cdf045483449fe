package io.cobble.flink.table;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;

/** Checks the source options that do not depend on what the path holds. */
final class SourceOptionsValidator {

  private SourceOptionsValidator() {}

  /** Validates every source option and returns the declared {@code source.kind}. */
  static SourceKind validate(ReadableConfig options) {
    SourceKind kind = SourceKind.parse(options.get(CobbleSourceOptions.SOURCE_KIND));
    boolean latest = checkpointIdIsLatest(options.get(CobbleSourceOptions.SCAN_CHECKPOINT_ID));
    ScanMode mode = ScanMode.parse(options.get(CobbleSourceOptions.SCAN_MODE));
    if (mode == ScanMode.STREAMING && !latest) {
      throw new ValidationException(
          "Option '"
              + CobbleSourceOptions.SCAN_MODE.key()
              + "' = 'streaming' follows new snapshots and works only with '"
              + CobbleSourceOptions.SCAN_CHECKPOINT_ID.key()
              + "' = 'latest'; set scan.mode to 'batch' to read one checkpoint.");
    }
    long poll = options.get(CobbleSourceOptions.SCAN_POLL_INTERVAL_MS);
    if (poll <= 0) {
      throw new ValidationException(
          "Option '"
              + CobbleSourceOptions.SCAN_POLL_INTERVAL_MS.key()
              + "' must be > 0, but is "
              + poll
              + ".");
    }
    long lease = options.get(CobbleSourceOptions.SCAN_SNAPSHOT_LEASE_MS);
    if (lease <= poll) {
      throw new ValidationException(
          "Option '"
              + CobbleSourceOptions.SCAN_SNAPSHOT_LEASE_MS.key()
              + "' must be greater than '"
              + CobbleSourceOptions.SCAN_POLL_INTERVAL_MS.key()
              + "' ("
              + poll
              + "), since the lease is renewed at each poll, but is "
              + lease
              + ".");
    }
    options
        .getOptional(CobbleTableOptions.BUCKET)
        .ifPresent(
            bucket -> {
              if (bucket <= 0) {
                throw new ValidationException(
                    "Option '"
                        + CobbleTableOptions.BUCKET.key()
                        + "' must be > 0 when given, but is "
                        + bucket
                        + "; leave it out to use the table's bucket count.");
              }
            });
    int inFlight = options.get(CobbleSourceOptions.LOOKUP_ASYNC_MAX_IN_FLIGHT);
    if (inFlight <= 0) {
      throw new ValidationException(
          "Option '"
              + CobbleSourceOptions.LOOKUP_ASYNC_MAX_IN_FLIGHT.key()
              + "' must be > 0, but is "
              + inFlight
              + ".");
    }
    if (kind != SourceKind.STATE && kind != SourceKind.AUTO) {
      rejectOutsideKind(options, CobbleSourceOptions.STATE_NAME, "state", kind);
      rejectOutsideKind(options, CobbleSourceOptions.STATE_OPERATOR_ID, "state", kind);
      rejectOutsideKind(options, CobbleSourceOptions.STATE_KIND, "state", kind);
    }
    if (kind != SourceKind.RAW) {
      rejectOutsideKind(options, CobbleSourceOptions.RAW_COLUMNS, "raw", kind);
    }
    return kind;
  }

  /** The Flink checkpoint id {@code scan.checkpoint-id} names, 0 for {@code latest}. */
  static long checkpointId(ReadableConfig options) {
    String value = options.get(CobbleSourceOptions.SCAN_CHECKPOINT_ID).trim();
    return checkpointIdIsLatest(value) ? 0 : Long.parseLong(value);
  }

  private static boolean checkpointIdIsLatest(String value) {
    String trimmed = value.trim();
    if (trimmed.equalsIgnoreCase(CobbleSourceOptions.LATEST)) {
      return true;
    }
    long id;
    try {
      id = Long.parseLong(trimmed);
    } catch (NumberFormatException e) {
      id = 0;
    }
    if (id <= 0) {
      throw new ValidationException(
          "Option '"
              + CobbleSourceOptions.SCAN_CHECKPOINT_ID.key()
              + "' must be 'latest' or a positive checkpoint id, but is '"
              + value
              + "'.");
    }
    return false;
  }

  private static void rejectOutsideKind(
      ReadableConfig options, ConfigOption<String> option, String ownKind, SourceKind kind) {
    if (options.getOptional(option).isPresent()) {
      throw new ValidationException(
          "Option '"
              + option.key()
              + "' applies only to "
              + CobbleSourceOptions.SOURCE_KIND.key()
              + " = '"
              + ownKind
              + "', but the source kind is '"
              + kind.optionValue()
              + "'; remove it or set "
              + CobbleSourceOptions.SOURCE_KIND.key()
              + " to '"
              + ownKind
              + "'.");
    }
  }
}
