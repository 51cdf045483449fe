package io.cobble;

import io.cobble.util.EnumOption;
import io.cobble.util.Sizes;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The definition of one engine configuration key: its key, type, default, allowed values and
 * description, declared once in {@link EngineOptions} (the way Flink declares a {@code
 * ConfigOption}). {@link Config} parses and validates through it, and the README's option table is
 * generated from it ({@link EngineOptions#markdownTable()}).
 *
 * @param <T> the parsed type: {@code Integer}, {@code Long} (sizes in bytes, durations in
 *     milliseconds), {@code Boolean}, an enum, or {@code String} for values whose syntax depends on
 *     other keys ({@code bucket-ranges}, {@code sst.compression})
 */
public final class EngineOption<T> {

  /** The value syntax of an option. */
  public enum Type {
    /** A whole number within {@link #min()}..{@link #max()}. */
    INTEGER,
    /** A byte size such as {@code 64mb}, {@code 4 KiB} or {@code 1024}. */
    SIZE,
    /** {@code true} or {@code false}. */
    BOOLEAN,
    /** A non-negative number with an optional unit ms, s, m, h or d (milliseconds without one). */
    DURATION,
    /** One of a fixed set of names, case-insensitive. */
    ENUM,
    /** Free text with a syntax of its own, checked by {@link Config} against other keys. */
    TEXT
  }

  /** What {@code compaction.write-stall-limit} holds while Cobble derives it. */
  static final String DERIVED = "derived";

  private final String key;
  private final Type type;
  private final String defaultValue;
  private final String defaultDisplay;
  private final String allowedValues;
  private final String description;
  private final long min;
  private final long max;
  private final Parser<T> parser;
  private final Function<T, String> formatter;

  /** Reads the text of one option; errors name the option's key. */
  private interface Parser<T> {
    T parse(EngineOption<T> option, String text);
  }

  private EngineOption(
      String key,
      Type type,
      String defaultValue,
      String defaultDisplay,
      String allowedValues,
      String description,
      long min,
      long max,
      Parser<T> parser,
      Function<T, String> formatter) {
    this.key = key;
    this.type = type;
    this.defaultValue = defaultValue;
    this.defaultDisplay = defaultDisplay;
    this.allowedValues = allowedValues;
    this.description = description;
    this.min = min;
    this.max = max;
    this.parser = parser;
    this.formatter = formatter;
  }

  static EngineOption<Integer> integer(
      String key, int defaultValue, long min, long max, String description) {
    String text = String.valueOf(defaultValue);
    return integer(key, text, text, min + ".." + max, min, max, description);
  }

  /**
   * An integer whose default or upper/lower limit depends on other keys: {@code defaultValue} is
   * the text {@link Config} accepts (such as {@link #DERIVED}), the displays document the rule.
   * {@code min}..{@code max} are the limits that hold whatever the other keys say.
   */
  static EngineOption<Integer> integer(
      String key,
      String defaultValue,
      String defaultDisplay,
      String allowedDisplay,
      long min,
      long max,
      String description) {
    return new EngineOption<>(
        key,
        Type.INTEGER,
        defaultValue,
        defaultDisplay,
        allowedDisplay,
        description,
        min,
        max,
        (option, text) -> option.parseInt(text, min, max),
        String::valueOf);
  }

  static EngineOption<Long> size(
      String key, String defaultValue, long min, long max, String description) {
    return new EngineOption<>(
        key,
        Type.SIZE,
        defaultValue,
        defaultValue,
        Sizes.format(min) + ".." + Sizes.format(max),
        description,
        min,
        max,
        (option, text) -> option.parseSize(text, min, max),
        String::valueOf);
  }

  static EngineOption<Boolean> bool(String key, boolean defaultValue, String description) {
    return new EngineOption<>(
        key,
        Type.BOOLEAN,
        String.valueOf(defaultValue),
        String.valueOf(defaultValue),
        "true, false",
        description,
        0,
        1,
        EngineOption::parseBool,
        String::valueOf);
  }

  static EngineOption<Long> duration(String key, String defaultValue, String description) {
    return new EngineOption<>(
        key,
        Type.DURATION,
        defaultValue,
        defaultValue,
        "≥ 0, unit ms, s, m, h or d",
        description,
        0,
        Long.MAX_VALUE,
        EngineOption::parseDurationMillis,
        millis -> millis + "ms");
  }

  static <E extends Enum<E>> EngineOption<E> enumeration(
      String key, Class<E> type, E defaultValue, String description) {
    String allowed =
        Arrays.stream(type.getEnumConstants())
            .map(EngineOption::lowerName)
            .collect(Collectors.joining(", "));
    return new EngineOption<>(
        key,
        Type.ENUM,
        lowerName(defaultValue),
        lowerName(defaultValue),
        allowed,
        description,
        0,
        type.getEnumConstants().length - 1,
        (option, text) -> EnumOption.parse(type, key, text),
        EngineOption::lowerName);
  }

  static EngineOption<String> text(
      String key, String defaultValue, String allowedValues, String description) {
    return new EngineOption<>(
        key,
        Type.TEXT,
        defaultValue,
        defaultValue,
        allowedValues,
        description,
        0,
        0,
        (option, text) -> text.trim(),
        Function.identity());
  }

  public String key() {
    return key;
  }

  public Type type() {
    return type;
  }

  /** The default as text {@link Config} accepts (for example {@code 32mb}). */
  public String defaultValue() {
    return defaultValue;
  }

  /**
   * Whether Cobble derives the default from other keys ({@link #defaultValue()} is then {@code
   * derived}, which {@link Config} resolves and {@link #parse} does not accept).
   */
  public boolean derivedDefault() {
    return DERIVED.equals(defaultValue);
  }

  /** The default as documented: the text default, or how a derived default is computed. */
  public String defaultDisplay() {
    return defaultDisplay;
  }

  /** The allowed values as documented, for example {@code 1..65536} or {@code none, lz4}. */
  public String allowedValues() {
    return allowedValues;
  }

  public String description() {
    return description;
  }

  /** Smallest allowed value of an {@link Type#INTEGER} or {@link Type#SIZE} option. */
  public long min() {
    return min;
  }

  /** Largest allowed value of an {@link Type#INTEGER} or {@link Type#SIZE} option. */
  public long max() {
    return max;
  }

  /**
   * Parses and validates {@code text}; the error names this key and what is allowed. Limits that
   * depend on other keys (for example {@code compaction.write-stall-limit} ≥ l0-file-limit + 2) are
   * checked by {@link Config}.
   */
  public T parse(String text) {
    Objects.requireNonNull(text, key);
    return parser.parse(this, text);
  }

  /** {@code value} as text that {@link #parse} reads back. */
  public String format(T value) {
    return formatter.apply(Objects.requireNonNull(value, key));
  }

  int parseInt(String text, long min, long max) {
    long v;
    try {
      v = Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "invalid value '" + text + "' for " + key + ": expected an integer");
    }
    if (v < min || v > max) {
      throw new IllegalArgumentException(
          "invalid value " + v + " for " + key + ": allowed range is " + min + ".." + max);
    }
    return (int) v;
  }

  long parseSize(String text, long min, long max) {
    long v = Sizes.parse(key, text);
    if (v < min || v > max) {
      throw new IllegalArgumentException(
          "invalid size '"
              + text
              + "' for "
              + key
              + ": allowed range is "
              + Sizes.format(min)
              + ".."
              + Sizes.format(max));
    }
    return v;
  }

  private boolean parseBool(String text) {
    String v = text.trim().toLowerCase(Locale.ROOT);
    if (v.equals("true")) {
      return true;
    }
    if (v.equals("false")) {
      return false;
    }
    throw new IllegalArgumentException(
        "invalid value '" + text + "' for " + key + ": allowed are true, false");
  }

  private long parseDurationMillis(String text) {
    String s = text.trim().toLowerCase(Locale.ROOT);
    long mult = 1;
    String num = s;
    if (s.endsWith("ms")) {
      num = s.substring(0, s.length() - 2);
    } else if (s.endsWith("s")) {
      mult = 1000;
      num = s.substring(0, s.length() - 1);
    } else if (s.endsWith("m")) {
      mult = 60_000;
      num = s.substring(0, s.length() - 1);
    } else if (s.endsWith("h")) {
      mult = 3_600_000;
      num = s.substring(0, s.length() - 1);
    } else if (s.endsWith("d")) {
      mult = 86_400_000;
      num = s.substring(0, s.length() - 1);
    }
    try {
      long v = Long.parseLong(num.trim());
      if (v < 0) {
        throw new NumberFormatException();
      }
      return Math.multiplyExact(v, mult);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(
          "invalid duration '"
              + text
              + "' for "
              + key
              + ": expected a non-negative number with optional unit ms, s, m, h, d");
    }
  }

  private static String lowerName(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT);
  }

  @Override
  public String toString() {
    return key;
  }
}
