package io.cobble;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** The Cobble release this jar was built as, read from a resource the build fills in. */
public final class CobbleVersion {

  private static final String VERSION = load();

  private CobbleVersion() {}

  public static String get() {
    return VERSION;
  }

  private static String load() {
    try (InputStream in = CobbleVersion.class.getResourceAsStream("/cobble-version.properties")) {
      if (in == null) {
        throw new IllegalStateException("cobble-version.properties is missing from the Cobble jar");
      }
      Properties properties = new Properties();
      properties.load(in);
      return properties.getProperty("version");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
