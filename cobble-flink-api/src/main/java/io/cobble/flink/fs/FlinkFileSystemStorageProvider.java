package io.cobble.flink.fs;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProvider;
import java.io.IOException;
import java.net.URI;
import java.util.Collections;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;
import org.apache.flink.core.fs.PluginFileSystemFactory;
import org.apache.flink.core.fs.UnsupportedFileSystemSchemeException;
import org.apache.flink.core.plugin.PluginManager;
import org.apache.flink.core.plugin.PluginUtils;

/**
 * Storage for every URI scheme Cobble's built-in providers do not serve, through Flink's own {@link
 * FileSystem}: whatever the cluster reaches (HDFS, ABFS, GCS, OSS, {@code s3a}/{@code s3p} through
 * Flink's S3 plugins) Cobble reaches too. Without table options the table uses the file system
 * Flink configured for this process from the cluster configuration. With {@code
 * storage.option.<key>} options, each key is a Flink configuration key set over the cluster
 * configuration exactly as written (dotted keys such as {@code fs.azure.account.key.<account>}
 * included), and the scheme's Flink file system factory (from {@code plugins/} or the class path)
 * creates a file system with that configuration, once per distinct set of options.
 */
public final class FlinkFileSystemStorageProvider implements StorageProvider {

  /** Names this provider in messages. */
  public static final String NAME = "Flink file system";

  private static final Map<Key, FileSystem> CONFIGURED = new ConcurrentHashMap<>();

  private static volatile PluginManager plugins;

  /** Claims no scheme of its own: Cobble falls back to it for schemes without a provider. */
  @Override
  public Set<String> schemes() {
    return Collections.emptySet();
  }

  /** Any Flink configuration key, as the scheme's file system reads it. */
  @Override
  public Set<String> optionKeys() {
    return Collections.singleton("*");
  }

  @Override
  public Storage open(URI base, StorageOptions options) throws IOException {
    String scheme = base.getScheme() == null ? "" : base.getScheme().toLowerCase(Locale.ROOT);
    try {
      FileSystem fs =
          options.keys().isEmpty()
              ? processFileSystem(scheme, base)
              : configured(scheme, base, options.asMap());
      return new FlinkFileSystemStorage(base, fs);
    } catch (IOException | RuntimeException e) {
      // Flink's message names the scheme's missing plugin or the bad setting; the keys may not
      // be shown with their values, which can be credentials.
      throw new IOException(
          "The "
              + NAME
              + " provider cannot open '"
              + base
              + "' (scheme '"
              + scheme
              + "', table options "
              + options.keys()
              + "): "
              + e.getMessage(),
          e);
    }
  }

  /**
   * The file system Flink set up for this process; where it was set up without the cluster's
   * plugins (a client that never initialized Flink's file systems), the scheme's factory from the
   * cluster configuration instead.
   */
  private static FileSystem processFileSystem(String scheme, URI base) throws IOException {
    try {
      return FileSystem.get(base);
    } catch (UnsupportedFileSystemSchemeException e) {
      return configured(scheme, base, Collections.emptyMap());
    }
  }

  private static FileSystem configured(String scheme, URI base, Map<String, String> options)
      throws IOException {
    Key key = new Key(scheme, base.getAuthority(), options);
    FileSystem fs = CONFIGURED.get(key);
    if (fs == null) {
      Configuration config = new Configuration(ClusterConfiguration.get());
      options.forEach(config::setString);
      FileSystemFactory factory = factory(scheme);
      factory.configure(config);
      fs = factory.create(base);
      FileSystem raced = CONFIGURED.putIfAbsent(key, fs);
      fs = raced == null ? fs : raced;
    }
    return fs;
  }

  /** A fresh factory for the scheme: from the cluster's plugins first, then the class path. */
  private static FileSystemFactory factory(String scheme) {
    for (Iterator<FileSystemFactory> it = pluginManager().load(FileSystemFactory.class);
        it.hasNext(); ) {
      FileSystemFactory factory = it.next();
      if (scheme.equals(factory.getScheme())) {
        return PluginFileSystemFactory.of(factory);
      }
    }
    for (FileSystemFactory factory :
        ServiceLoader.load(FileSystemFactory.class, FileSystem.class.getClassLoader())) {
      if (scheme.equals(factory.getScheme())) {
        return factory;
      }
    }
    throw new IllegalArgumentException(
        "Flink has no file system for scheme '"
            + scheme
            + "' in its plugins or on its class path; install the scheme's Flink file system"
            + " plugin under plugins/ (for example flink-s3-fs-hadoop for s3a).");
  }

  private static PluginManager pluginManager() {
    PluginManager manager = plugins;
    if (manager == null) {
      synchronized (FlinkFileSystemStorageProvider.class) {
        if (plugins == null) {
          plugins = PluginUtils.createPluginManagerFromRootFolder(ClusterConfiguration.get());
        }
        manager = plugins;
      }
    }
    return manager;
  }

  /** One configured file system per scheme, authority and table options. */
  private static final class Key {
    private final String scheme;
    private final String authority;
    private final Map<String, String> options;

    Key(String scheme, String authority, Map<String, String> options) {
      this.scheme = scheme;
      this.authority = authority;
      this.options = options;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Key)) {
        return false;
      }
      Key other = (Key) o;
      return scheme.equals(other.scheme)
          && Objects.equals(authority, other.authority)
          && options.equals(other.options);
    }

    @Override
    public int hashCode() {
      return Objects.hash(scheme, authority, options);
    }
  }
}
