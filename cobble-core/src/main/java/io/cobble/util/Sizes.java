package io.cobble.util;

import java.util.Locale;

/** Parses human size strings such as {@code 64mb}, {@code 4 KiB} or {@code 1024}. */
public final class Sizes {
  private Sizes() {}

  public static long parse(String key, String text) {
    String s = text.trim().toLowerCase(Locale.ROOT).replace(" ", "");
    int i = 0;
    while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
      i++;
    }
    if (i == 0) {
      throw bad(key, text);
    }
    double number;
    try {
      number = Double.parseDouble(s.substring(0, i));
    } catch (NumberFormatException e) {
      throw bad(key, text);
    }
    long mult;
    switch (s.substring(i)) {
      case "":
      case "b":
        mult = 1;
        break;
      case "k":
      case "kb":
      case "kib":
        mult = 1L << 10;
        break;
      case "m":
      case "mb":
      case "mib":
        mult = 1L << 20;
        break;
      case "g":
      case "gb":
      case "gib":
        mult = 1L << 30;
        break;
      case "t":
      case "tb":
      case "tib":
        mult = 1L << 40;
        break;
      default:
        throw bad(key, text);
    }
    double v = number * mult;
    if (v > Long.MAX_VALUE || v != Math.floor(v)) {
      throw bad(key, text);
    }
    return (long) v;
  }

  /** {@code bytes} in the largest unit that holds it exactly, e.g. {@code 64mb}; else bytes. */
  public static String format(long bytes) {
    String[] units = {"tb", "gb", "mb", "kb"};
    for (int i = 0; i < units.length; i++) {
      long unit = 1L << (10 * (units.length - i));
      if (bytes != 0 && bytes % unit == 0) {
        return (bytes / unit) + units[i];
      }
    }
    return String.valueOf(bytes);
  }

  private static IllegalArgumentException bad(String key, String text) {
    return new IllegalArgumentException(
        "invalid size '"
            + text
            + "' for "
            + key
            + ": expected a whole number of bytes with optional unit b, kb, mb, gb, tb"
            + " (e.g. 64mb)");
  }
}
