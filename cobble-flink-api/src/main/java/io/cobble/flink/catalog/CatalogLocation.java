package io.cobble.flink.catalog;

import io.cobble.flink.table.CobbleTableOptions;
import io.cobble.flink.table.TablePaths;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.io.IOException;
import java.net.URI;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;

/**
 * Where a catalog lives: {@code <path>/<storage-id>/}, and the storage provider settings to open
 * it. Metadata versions go to {@code catalog/}, tables to {@code tables/<table-id>/}. The provider
 * settings (credentials among them) stay in memory: they are handed to the jobs' table options and
 * never written to a file. {@link #toString()} leaves them out.
 */
final class CatalogLocation {

  static final String TABLES = "tables/";

  private final URI root;
  private final Map<String, String> providerOptions;

  private CatalogLocation(URI root, Map<String, String> providerOptions) {
    this.root = root;
    this.providerOptions = Collections.unmodifiableMap(new TreeMap<>(providerOptions));
  }

  /** Validates the catalog options naming the storage. */
  static CatalogLocation of(ReadableConfig options, Map<String, String> rawOptions) {
    URI warehouse = TablePaths.normalize(options.get(CobbleCatalogOptions.PATH));
    String storageId = options.get(CobbleCatalogOptions.STORAGE_ID).trim();
    if (storageId.isEmpty() || storageId.startsWith(".") || !storageId.matches("[A-Za-z0-9._-]+")) {
      throw new ValidationException(
          "Option '"
              + CobbleCatalogOptions.STORAGE_ID.key()
              + "' must be a non-empty name of letters, digits, '.', '_' or '-' not starting with"
              + " '.', but is '"
              + storageId
              + "'.");
    }
    Map<String, String> provider = new TreeMap<>();
    rawOptions.forEach(
        (key, value) -> {
          if (key.startsWith(CobbleCatalogOptions.STORAGE_OPTION_PREFIX)) {
            provider.put(key.substring(CobbleCatalogOptions.STORAGE_OPTION_PREFIX.length()), value);
          }
        });
    mapS3(options, warehouse, provider, CobbleCatalogOptions.S3_ACCESS_KEY, "access_key_id");
    mapS3(options, warehouse, provider, CobbleCatalogOptions.S3_SECRET_KEY, "secret_access_key");
    mapS3(options, warehouse, provider, CobbleCatalogOptions.S3_ENDPOINT, "endpoint");
    String base = warehouse.toString();
    URI root = URI.create((base.endsWith("/") ? base : base + "/") + storageId + "/");
    return new CatalogLocation(root, provider);
  }

  /** The Flink-style {@code s3.*} keys are the s3 provider's keys under other names. */
  private static void mapS3(
      ReadableConfig options,
      URI warehouse,
      Map<String, String> provider,
      ConfigOption<String> option,
      String providerKey) {
    if (!options.getOptional(option).isPresent()) {
      return;
    }
    if (!"s3".equalsIgnoreCase(warehouse.getScheme())) {
      throw new ValidationException(
          "Option '"
              + option.key()
              + "' applies to an s3:// warehouse, but 'path' is '"
              + warehouse
              + "'. Remove it, or use 'storage.option.<key>' for this path's provider.");
    }
    String value = options.get(option);
    String given = provider.get(providerKey);
    if (given != null && !given.equals(value)) {
      throw new ValidationException(
          "Options '"
              + option.key()
              + "' and '"
              + CobbleCatalogOptions.STORAGE_OPTION_PREFIX
              + providerKey
              + "' set the same s3 setting to different values; keep one of them.");
    }
    provider.put(providerKey, value);
  }

  /** {@code <path>/<storage-id>/}. */
  URI root() {
    return root;
  }

  Storage open() throws IOException {
    return StorageProviders.open(root, StorageOptions.of(providerOptions));
  }

  /** The root of a table's files. */
  URI tableRoot(String tableId) {
    return root.resolve(TABLES + tableId + "/");
  }

  /** The table options that open a table's storage, as the connector reads them. */
  Map<String, String> storageTableOptions() {
    Map<String, String> options = new TreeMap<>();
    providerOptions.forEach(
        (key, value) -> options.put(CobbleTableOptions.STORAGE_OPTION_PREFIX + key, value));
    return options;
  }

  @Override
  public String toString() {
    return root.toString();
  }
}
