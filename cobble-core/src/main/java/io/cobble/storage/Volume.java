package io.cobble.storage;

import java.io.IOException;
import java.net.URI;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/** A base URI, the kinds of use it serves, and the provider options to open it with. */
public final class Volume {

  private final URI uri;
  private final Set<VolumeKind> kinds;
  private final StorageOptions options;

  private Volume(URI uri, Set<VolumeKind> kinds, StorageOptions options) {
    if (uri.getScheme() == null) {
      throw new IllegalArgumentException("Volume URI '" + uri + "' has no scheme.");
    }
    if (kinds.isEmpty()) {
      throw new IllegalArgumentException(
          "Volume "
              + uri
              + " serves no kind; give it at least one of "
              + EnumSet.allOf(VolumeKind.class)
              + ".");
    }
    this.uri = normalize(uri);
    this.kinds = Collections.unmodifiableSet(EnumSet.copyOf(kinds));
    this.options = Objects.requireNonNull(options, "options");
  }

  /** A volume at a URI, or at a local path when the location has no scheme. */
  public static Volume of(String location, Set<VolumeKind> kinds, StorageOptions options) {
    return new Volume(StorageProviders.toUri(location), kinds, options);
  }

  public static Volume of(String location, VolumeKind first, VolumeKind... rest) {
    return of(location, EnumSet.of(first, rest), StorageOptions.empty());
  }

  /** The minimal setup: one local directory for data, metadata and snapshots. */
  public static Volume local(String path) {
    return of(path, VolumeKind.PRIMARY_HIGH, VolumeKind.META, VolumeKind.SNAPSHOT);
  }

  public URI uri() {
    return uri;
  }

  public Set<VolumeKind> kinds() {
    return kinds;
  }

  public boolean serves(VolumeKind kind) {
    return kinds.contains(kind);
  }

  public StorageOptions options() {
    return options;
  }

  /** Opens this volume's storage through the provider for its scheme. */
  public Storage open() throws IOException {
    return StorageProviders.open(uri, options);
  }

  /** Whether {@code other} lies inside this volume (or is the same place). */
  boolean contains(Volume other) {
    String outer = withTrailingSlash(uri.toString());
    return withTrailingSlash(other.uri.toString()).startsWith(outer);
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof Volume
        && uri.equals(((Volume) other).uri)
        && kinds.equals(((Volume) other).kinds)
        && options.equals(((Volume) other).options);
  }

  @Override
  public int hashCode() {
    return Objects.hash(uri, kinds, options);
  }

  @Override
  public String toString() {
    return "Volume[" + uri + " " + kinds + (options.keys().isEmpty() ? "" : " " + options) + "]";
  }

  /** Lower-case scheme and host, normalized path, no trailing slash: equal places compare equal. */
  private static URI normalize(URI uri) {
    URI normalized = uri.normalize();
    String text = normalized.toString();
    String scheme = normalized.getScheme();
    text = scheme.toLowerCase(Locale.ROOT) + text.substring(scheme.length());
    while (text.endsWith("/") && !text.endsWith(":///") && !text.endsWith("://")) {
      text = text.substring(0, text.length() - 1);
    }
    return URI.create(text);
  }

  private static String withTrailingSlash(String text) {
    return text.endsWith("/") ? text : text + "/";
  }
}
