package io.cobble.flink.catalog;

import io.cobble.flink.ShimLoader;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Catalog;
import org.apache.flink.table.factories.CatalogFactory;
import org.apache.flink.table.factories.FactoryUtil;

/** {@code CREATE CATALOG ... WITH ('type' = 'cobble', ...)}: validates every option up front. */
public final class CobbleCatalogFactory implements CatalogFactory {

  public static final String IDENTIFIER = "cobble";

  /** The engine's bucket limit. */
  static final int MAX_BUCKETS = 65536;

  @Override
  public String factoryIdentifier() {
    return IDENTIFIER;
  }

  @Override
  public Set<ConfigOption<?>> requiredOptions() {
    return new HashSet<>(Arrays.asList(CobbleCatalogOptions.PATH, CobbleCatalogOptions.BUCKETS));
  }

  @Override
  public Set<ConfigOption<?>> optionalOptions() {
    return new HashSet<>(
        Arrays.asList(
            CobbleCatalogOptions.STORAGE_ID,
            CobbleCatalogOptions.DEFAULT_DATABASE,
            CobbleCatalogOptions.S3_ACCESS_KEY,
            CobbleCatalogOptions.S3_SECRET_KEY,
            CobbleCatalogOptions.S3_ENDPOINT));
  }

  @Override
  public Catalog createCatalog(Context context) {
    ShimLoader.current();
    FactoryUtil.CatalogFactoryHelper helper = FactoryUtil.createCatalogFactoryHelper(this, context);
    helper.validateExcept(CobbleCatalogOptions.STORAGE_OPTION_PREFIX);
    ReadableConfig options = helper.getOptions();
    int buckets = options.get(CobbleCatalogOptions.BUCKETS);
    if (buckets < 1 || buckets > MAX_BUCKETS) {
      throw new ValidationException(
          "Option '"
              + CobbleCatalogOptions.BUCKETS.key()
              + "' must be between 1 and "
              + MAX_BUCKETS
              + ", but is "
              + buckets
              + ".");
    }
    String defaultDatabase = options.get(CobbleCatalogOptions.DEFAULT_DATABASE).trim();
    if (defaultDatabase.isEmpty()) {
      throw new ValidationException(
          "Option '" + CobbleCatalogOptions.DEFAULT_DATABASE.key() + "' must not be empty.");
    }
    CatalogLocation location =
        CatalogLocation.of(
            options, context.getOptions() == null ? Collections.emptyMap() : context.getOptions());
    return new CobbleCatalog(context.getName(), defaultDatabase, location, buckets);
  }
}
