package io.cobble.benchmarks.flinksql;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.paimon.CoreOptions;
import org.apache.paimon.flink.FlinkConnectorOptions;
import org.apache.paimon.options.ConfigOption;

/**
 * The Paimon defaults that shape its side of the comparison, read from the Paimon jar on the
 * classpath so that the printed settings are the ones that ran.
 */
final class PaimonDefaults {
  private PaimonDefaults() {}

  static List<String> describe() {
    List<ConfigOption<?>> options =
        Arrays.asList(
            CoreOptions.MERGE_ENGINE,
            CoreOptions.CHANGELOG_PRODUCER,
            CoreOptions.DELETION_VECTORS_ENABLED,
            CoreOptions.FILE_FORMAT,
            CoreOptions.FILE_COMPRESSION,
            CoreOptions.WRITE_BUFFER_SIZE,
            CoreOptions.WRITE_BUFFER_SPILLABLE,
            CoreOptions.NUM_SORTED_RUNS_COMPACTION_TRIGGER,
            CoreOptions.TARGET_FILE_SIZE,
            FlinkConnectorOptions.LOOKUP_CACHE_MODE,
            FlinkConnectorOptions.LOOKUP_ASYNC,
            CoreOptions.LOOKUP_LOCAL_FILE_TYPE,
            CoreOptions.LOOKUP_CACHE_MAX_MEMORY_SIZE,
            CoreOptions.LOOKUP_CACHE_MAX_DISK_SIZE,
            CoreOptions.LOOKUP_CACHE_FILE_RETENTION,
            CoreOptions.LOOKUP_CACHE_BLOOM_FILTER_ENABLED,
            CoreOptions.LOOKUP_CACHE_SPILL_COMPRESSION);
    List<String> lines = new ArrayList<>();
    for (ConfigOption<?> option : options) {
      lines.add(
          option.key() + " = " + (option.hasDefaultValue() ? option.defaultValue() : "(none)"));
    }
    return lines;
  }
}
