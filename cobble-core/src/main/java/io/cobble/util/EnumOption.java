package io.cobble.util;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** Parses a config value into an enum constant, case-insensitively, naming the allowed values. */
public final class EnumOption {

  private EnumOption() {}

  public static <E extends Enum<E>> E parse(Class<E> type, String key, String text) {
    try {
      return Enum.valueOf(type, text.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      String allowed =
          Arrays.stream(type.getEnumConstants())
              .map(c -> c.name().toLowerCase(Locale.ROOT))
              .collect(Collectors.joining(", "));
      throw new IllegalArgumentException(
          "invalid value '" + text + "' for " + key + ": allowed are " + allowed);
    }
  }
}
