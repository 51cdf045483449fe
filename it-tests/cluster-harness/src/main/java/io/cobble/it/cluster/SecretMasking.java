package io.cobble.it.cluster;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Masks the values of credential options in SQL text before the harness puts it into an exception
 * message (which lands in test reports): {@code 'storage.option.secret_access_key' = 'abc'} becomes
 * {@code 'storage.option.secret_access_key' = '******'}. An option counts as a credential when its
 * key contains {@code secret}, {@code key} or {@code password}, the rule Flink's own configuration
 * logging follows in spirit.
 */
public final class SecretMasking {

  private static final Pattern QUOTED_OPTION =
      Pattern.compile("('(?:[^']|'')*')(\\s*=\\s*)'(?:[^']|'')*'");

  private SecretMasking() {}

  public static boolean isSensitiveKey(String key) {
    String lower = key.toLowerCase(java.util.Locale.ROOT);
    return lower.contains("secret") || lower.contains("key") || lower.contains("password");
  }

  /** {@code sql} with the value of every sensitive {@code 'key' = 'value'} pair replaced. */
  public static String maskOptions(String sql) {
    Matcher m = QUOTED_OPTION.matcher(sql);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String key = m.group(1);
      String replacement = isSensitiveKey(key) ? key + m.group(2) + "'******'" : m.group();
      m.appendReplacement(out, Matcher.quoteReplacement(replacement));
    }
    m.appendTail(out);
    return out.toString();
  }
}
