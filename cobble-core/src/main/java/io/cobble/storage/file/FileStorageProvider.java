package io.cobble.storage.file;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProvider;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;
import java.util.Set;

/**
 * The {@code file} scheme: local or mounted file systems through NIO.
 *
 * <p>Option keys:
 *
 * <ul>
 *   <li>{@code fsync} ({@code true}): fsync files and their directories where durability needs it.
 *       Only turn it off for scratch data that is rebuilt after a crash.
 * </ul>
 */
public final class FileStorageProvider implements StorageProvider {

  public static final String FSYNC = "fsync";

  @Override
  public Set<String> schemes() {
    return Set.of("file");
  }

  @Override
  public Set<String> optionKeys() {
    return Set.of(FSYNC);
  }

  @Override
  public Storage open(URI base, StorageOptions options) throws IOException {
    options.requireOnly("file", optionKeys());
    if (base.getAuthority() != null && !base.getAuthority().isEmpty()) {
      throw new IllegalArgumentException(
          "File storage URI '" + base + "' names a host; use file:///absolute/path.");
    }
    Path root = Paths.get(base).toAbsolutePath().normalize();
    return FileStorage.open(root, parseBoolean(options.get(FSYNC).orElse("true")));
  }

  private static boolean parseBoolean(String value) {
    switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "true":
        return true;
      case "false":
        return false;
      default:
        throw new IllegalArgumentException(
            "Storage option '" + FSYNC + "' must be true or false, not '" + value + "'.");
    }
  }
}
