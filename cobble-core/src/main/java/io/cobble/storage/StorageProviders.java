package io.cobble.storage;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;

/** Finds the {@link StorageProvider} for a URI scheme and opens storage with it. */
public final class StorageProviders {

  /**
   * Loaded once: the loader below is fixed, so the set cannot change, and scanning the class path
   * for service files on every local metadata file cost a restore milliseconds each time.
   */
  private static volatile Map<String, StorageProvider> installed;

  private StorageProviders() {}

  /**
   * Opens storage at {@code location}: a URI with a scheme, or a local path (the minimal setup).
   */
  public static Storage open(String location, StorageOptions options) throws IOException {
    return open(toUri(location), options);
  }

  public static Storage open(URI base, StorageOptions options) throws IOException {
    return forScheme(base.getScheme()).open(base, options);
  }

  /** The provider serving {@code scheme}; the error lists the schemes that are installed. */
  public static StorageProvider forScheme(String scheme) {
    String wanted = scheme == null ? "" : scheme.toLowerCase(Locale.ROOT);
    Map<String, StorageProvider> installed = installed();
    StorageProvider provider = installed.get(wanted);
    if (provider == null) {
      throw new IllegalArgumentException(
          "No storage provider for URI scheme '"
              + wanted
              + "'. Installed schemes: "
              + String.join(", ", installed.keySet())
              + ". A provider is a jar on the class path with a META-INF/services/"
              + StorageProvider.class.getName()
              + " entry.");
    }
    return provider;
  }

  /** Installed providers by scheme. Two providers claiming one scheme is an error. */
  public static Map<String, StorageProvider> installed() {
    Map<String, StorageProvider> providers = installed;
    if (providers == null) {
      providers = Collections.unmodifiableMap(load());
      installed = providers;
    }
    return providers;
  }

  private static Map<String, StorageProvider> load() {
    // The SPI's own loader, not the context loader: inside Flink's child-first user class loader
    // the context loader may not see this jar, or may see a second copy of it whose providers
    // implement a different StorageProvider class.
    ServiceLoader<StorageProvider> loader =
        ServiceLoader.load(StorageProvider.class, StorageProvider.class.getClassLoader());
    Map<String, StorageProvider> byScheme = new TreeMap<>();
    for (StorageProvider provider : loader) {
      for (String scheme : provider.schemes()) {
        StorageProvider previous = byScheme.put(scheme.toLowerCase(Locale.ROOT), provider);
        if (previous != null && previous.getClass() != provider.getClass()) {
          throw new ServiceConfigurationError(
              "Storage providers "
                  + previous.getClass().getName()
                  + " and "
                  + provider.getClass().getName()
                  + " both claim URI scheme '"
                  + scheme
                  + "'; remove one of them from the class path.");
        }
      }
    }
    return byScheme;
  }

  /**
   * A location as a URI: strings with a scheme are parsed as URIs; anything else (including {@code
   * C:\...}) is a local path made absolute.
   */
  public static URI toUri(String location) {
    int colon = location.indexOf(':');
    if (colon > 1 && location.substring(0, colon).matches("[A-Za-z][A-Za-z0-9+.-]*")) {
      return URI.create(location);
    }
    return Paths.get(location).toAbsolutePath().normalize().toUri();
  }
}
