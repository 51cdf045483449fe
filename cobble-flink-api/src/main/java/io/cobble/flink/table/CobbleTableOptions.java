package io.cobble.flink.table;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/** Options every Cobble table has, whether it is read or written. */
public final class CobbleTableOptions {

  /** Everything after this prefix is forwarded unchanged to the storage provider of the path. */
  public static final String STORAGE_OPTION_PREFIX = "storage.option.";

  public static final ConfigOption<String> PATH =
      ConfigOptions.key("path")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Cobble table root (a URI or a path). Relative paths become absolute file:// URIs.");

  public static final ConfigOption<Integer> BUCKET =
      ConfigOptions.key("bucket")
          .intType()
          .noDefaultValue()
          .withDescription(
              "Total bucket count used for key routing. Required for the sink; the source infers"
                  + " it from snapshot metadata.");

  private CobbleTableOptions() {}
}
