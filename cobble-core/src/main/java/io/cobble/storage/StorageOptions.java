package io.cobble.storage;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Provider settings, forwarded unchanged from {@code storage.option.<provider-key>}. Keys may
 * contain dots and are never rewritten. Values may be credentials, so {@link #toString()} shows
 * keys only.
 */
public final class StorageOptions {

  /** The configuration prefix whose suffixes are provider keys. */
  public static final String PREFIX = "storage.option.";

  private static final StorageOptions EMPTY = new StorageOptions(new TreeMap<>());

  private final Map<String, String> values;

  private StorageOptions(TreeMap<String, String> values) {
    this.values = Collections.unmodifiableMap(values);
  }

  public static StorageOptions empty() {
    return EMPTY;
  }

  /** Options given directly by provider key. */
  public static StorageOptions of(Map<String, String> providerOptions) {
    TreeMap<String, String> copy = new TreeMap<>();
    providerOptions.forEach(
        (key, value) -> {
          if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("A storage option has an empty key.");
          }
          if (value == null) {
            throw new IllegalArgumentException("Storage option '" + key + "' has no value.");
          }
          copy.put(key, value);
        });
    return new StorageOptions(copy);
  }

  /**
   * The {@code storage.option.*} entries of a wider configuration, with the prefix cut off and the
   * rest of each key kept as written.
   */
  public static StorageOptions fromConfiguration(Map<String, String> configuration) {
    TreeMap<String, String> selected = new TreeMap<>();
    configuration.forEach(
        (key, value) -> {
          if (key.startsWith(PREFIX)) {
            selected.put(key.substring(PREFIX.length()), value);
          }
        });
    return of(selected);
  }

  /**
   * These options as defaults, with {@code explicit} taking precedence key by key (table options
   * over cluster defaults).
   */
  public StorageOptions overriddenBy(StorageOptions explicit) {
    TreeMap<String, String> merged = new TreeMap<>(values);
    merged.putAll(explicit.values);
    return new StorageOptions(merged);
  }

  public Optional<String> get(String key) {
    return Optional.ofNullable(values.get(key));
  }

  public Set<String> keys() {
    return values.keySet();
  }

  public Map<String, String> asMap() {
    return values;
  }

  /**
   * Rejects keys outside {@code accepted}: a mistyped key must fail instead of silently leaving a
   * default in place.
   */
  public void requireOnly(String provider, Set<String> accepted) {
    TreeSet<String> unknown = new TreeSet<>(values.keySet());
    unknown.removeAll(accepted);
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(
          "Unknown storage option"
              + (unknown.size() == 1 ? " " : "s ")
              + quoted(unknown)
              + " for the '"
              + provider
              + "' storage provider. Accepted keys (set as "
              + PREFIX
              + "<key>): "
              + (accepted.isEmpty() ? "none" : String.join(", ", new TreeSet<>(accepted)))
              + ".");
    }
  }

  private static String quoted(Set<String> keys) {
    StringBuilder out = new StringBuilder();
    for (String key : keys) {
      out.append(out.length() == 0 ? "" : ", ").append('\'').append(key).append('\'');
    }
    return out.toString();
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof StorageOptions && values.equals(((StorageOptions) other).values);
  }

  @Override
  public int hashCode() {
    return values.hashCode();
  }

  /** Keys only: values may be secrets. */
  @Override
  public String toString() {
    return "StorageOptions" + values.keySet() + " (values hidden)";
  }
}
