package io.cobble.flink.catalog;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/** Options of {@code CREATE CATALOG ... WITH ('type' = 'cobble', ...)}. */
public final class CobbleCatalogOptions {

  /** Everything after this prefix is forwarded unchanged to the storage provider of the path. */
  public static final String STORAGE_OPTION_PREFIX = "storage.option.";

  public static final ConfigOption<String> PATH =
      ConfigOptions.key("path")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Warehouse location (a URI or a path) holding the catalog's metadata and tables.");

  public static final ConfigOption<String> STORAGE_ID =
      ConfigOptions.key("storage-id")
          .stringType()
          .defaultValue("flink")
          .withDescription(
              "Namespace of this catalog under the warehouse: catalogs at one path with different"
                  + " storage ids see different databases and tables.");

  public static final ConfigOption<Integer> BUCKETS =
      ConfigOptions.key("buckets")
          .intType()
          .noDefaultValue()
          .withDescription(
              "Bucket count of every table of the catalog, 1 to 65536; fixed when the catalog is"
                  + " first created.");

  public static final ConfigOption<String> DEFAULT_DATABASE =
      ConfigOptions.key("default-database")
          .stringType()
          .defaultValue("default")
          .withDescription("Database the catalog starts in; created when missing.");

  public static final ConfigOption<String> S3_ACCESS_KEY =
      ConfigOptions.key("s3.access-key")
          .stringType()
          .noDefaultValue()
          .withDescription("Access key of an s3:// warehouse (the s3 provider's access_key_id).");

  public static final ConfigOption<String> S3_SECRET_KEY =
      ConfigOptions.key("s3.secret-key")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Secret key of an s3:// warehouse (the s3 provider's secret_access_key).");

  public static final ConfigOption<String> S3_ENDPOINT =
      ConfigOptions.key("s3.endpoint")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "Endpoint of an S3-compatible store for an s3:// warehouse (the s3 provider's"
                  + " endpoint).");

  private CobbleCatalogOptions() {}
}
