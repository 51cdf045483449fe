package io.cobble.flink.table;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;
import org.apache.flink.table.api.ValidationException;

/** The values of {@code source.kind}. */
public enum SourceKind {
  AUTO,
  SINK,
  STATE,
  RAW;

  public String optionValue() {
    return name().toLowerCase(Locale.ROOT);
  }

  static SourceKind parse(String value) {
    for (SourceKind kind : values()) {
      if (kind.optionValue().equalsIgnoreCase(value.trim())) {
        return kind;
      }
    }
    throw new ValidationException(
        "Option '"
            + CobbleSourceOptions.SOURCE_KIND.key()
            + "' must be one of "
            + Arrays.stream(values()).map(SourceKind::optionValue).collect(Collectors.joining(", "))
            + ", but is '"
            + value
            + "'.");
  }
}
