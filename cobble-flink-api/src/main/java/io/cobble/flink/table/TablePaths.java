package io.cobble.flink.table;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Paths;
import org.apache.flink.table.api.ValidationException;

/** Turns the {@code path} option into the absolute URI every process of a job agrees on. */
public final class TablePaths {

  private TablePaths() {}

  /** Keeps URIs with a scheme; makes plain paths absolute {@code file://} URIs. */
  public static URI normalize(String path) {
    if (path == null || path.trim().isEmpty()) {
      throw new ValidationException("Option 'path' must not be empty.");
    }
    String trimmed = path.trim();
    try {
      URI uri = new URI(trimmed);
      // A one-letter "scheme" is a Windows drive, not a URI scheme.
      if (uri.getScheme() != null && uri.getScheme().length() > 1) {
        if (uri.getUserInfo() != null) {
          throw new ValidationException(
              "Option 'path' must not carry credentials; pass them as 'storage.option.<key>'.");
        }
        return uri;
      }
    } catch (URISyntaxException notAUri) {
      // Fall through: treat it as a local path, which may contain spaces and the like.
    }
    return Paths.get(trimmed).toAbsolutePath().normalize().toUri();
  }
}
