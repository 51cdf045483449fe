package io.cobble.flink.table;

import io.cobble.flink.fs.FlinkFileSystemStorageProvider;
import io.cobble.flink.fs.S3ClusterDefaults;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.io.IOException;
import java.io.Serializable;
import java.net.URI;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where a table lives: its normalized root URI and the {@code storage.option.<key>} settings of the
 * DDL, forwarded to the storage provider unchanged. Serializable so that writers and readers open
 * the same storage as the planner checked.
 */
public final class TableStorage implements Serializable {

  private static final long serialVersionUID = 1L;

  private final URI root;
  private final HashMap<String, String> providerOptions;

  TableStorage(URI root, Map<String, String> providerOptions) {
    this.root = root;
    this.providerOptions = new HashMap<>(providerOptions);
  }

  /** The table's storage from its DDL options. */
  public static TableStorage fromTableOptions(URI root, Map<String, String> tableOptions) {
    Map<String, String> provider = new TreeMap<>();
    tableOptions.forEach(
        (key, value) -> {
          if (key.startsWith(CobbleTableOptions.STORAGE_OPTION_PREFIX)) {
            provider.put(key.substring(CobbleTableOptions.STORAGE_OPTION_PREFIX.length()), value);
          }
        });
    return new TableStorage(root, provider);
  }

  public URI root() {
    return root;
  }

  /** Same root and provider options: readers of equal storages may share one open reader. */
  @Override
  public boolean equals(Object o) {
    if (!(o instanceof TableStorage)) {
      return false;
    }
    TableStorage other = (TableStorage) o;
    return root.equals(other.root) && providerOptions.equals(other.providerOptions);
  }

  @Override
  public int hashCode() {
    return root.hashCode() * 31 + providerOptions.hashCode();
  }

  /**
   * Opens the storage rooted at the table path; the caller closes it. A scheme with a built-in
   * provider ({@code file}, {@code s3}) uses it, {@code s3} with the cluster's S3 settings as
   * defaults; every other scheme goes through Flink's own file systems.
   */
  public Storage open() throws IOException {
    StorageOptions options = StorageOptions.of(providerOptions);
    String scheme = root.getScheme() == null ? "" : root.getScheme().toLowerCase(Locale.ROOT);
    if (!StorageProviders.installed().containsKey(scheme)) {
      return new FlinkFileSystemStorageProvider().open(root, options);
    }
    if (scheme.equals("s3")) {
      options = S3ClusterDefaults.withClusterDefaults(options);
    }
    return StorageProviders.open(root, options);
  }
}
