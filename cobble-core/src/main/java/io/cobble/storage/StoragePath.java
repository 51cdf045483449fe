package io.cobble.storage;

/**
 * Checks the relative paths callers pass to {@link Storage}: {@code /}-separated, no empty, {@code
 * .} or {@code ..} segments, so a path can never escape its storage root on any provider.
 */
public final class StoragePath {

  private StoragePath() {}

  /** Returns {@code path} if it names a file under the root, else throws. */
  public static String check(String path) {
    if (path == null || path.isEmpty()) {
      throw new IllegalArgumentException("A storage path must not be empty.");
    }
    if (path.startsWith("/") || path.endsWith("/")) {
      throw new IllegalArgumentException(
          "Storage path '" + path + "' must be relative to the storage root and name a file.");
    }
    for (String segment : path.split("/", -1)) {
      if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
        throw new IllegalArgumentException(
            "Storage path '" + path + "' has an empty, '.' or '..' segment.");
      }
    }
    if (path.indexOf('\\') >= 0 || path.indexOf('\0') >= 0) {
      throw new IllegalArgumentException(
          "Storage path '" + path + "' must use '/' separators and no NUL characters.");
    }
    return path;
  }

  /**
   * Checks a listing prefix: like a path, but it may be empty (everything) or end with {@code /}
   * (one directory).
   */
  public static String checkPrefix(String prefix) {
    if (prefix.isEmpty()) {
      return prefix;
    }
    check(prefix.endsWith("/") ? prefix.substring(0, prefix.length() - 1) : prefix);
    return prefix;
  }
}
