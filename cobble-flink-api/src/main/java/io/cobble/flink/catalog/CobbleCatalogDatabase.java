package io.cobble.flink.catalog;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.table.catalog.CatalogDatabase;

/** A database of the Cobble catalog: a namespace of tables, without properties or comment. */
final class CobbleCatalogDatabase implements CatalogDatabase {

  @Override
  public Map<String, String> getProperties() {
    return Collections.emptyMap();
  }

  @Override
  public String getComment() {
    return "";
  }

  @Override
  public CatalogDatabase copy() {
    return new CobbleCatalogDatabase();
  }

  @Override
  public CatalogDatabase copy(Map<String, String> properties) {
    return new CobbleCatalogDatabase();
  }

  @Override
  public Optional<String> getDescription() {
    return Optional.of("Cobble catalog database");
  }

  @Override
  public Optional<String> getDetailedDescription() {
    return getDescription();
  }
}
