package io.cobble.flink.catalog;

import io.cobble.flink.table.layout.TableSchemaFile;
import java.util.Objects;

/**
 * A table of the catalog: its id (which names its directory, so a rename moves nothing) and its
 * schema: columns, primary key, the catalog's bucket count, and the Cobble column each value column
 * is stored in.
 */
final class CatalogTableEntry {

  private final String id;
  private final TableSchemaFile schema;

  CatalogTableEntry(String id, TableSchemaFile schema) {
    this.id = id;
    this.schema = schema;
  }

  String id() {
    return id;
  }

  TableSchemaFile schema() {
    return schema;
  }

  CatalogTableEntry withSchema(TableSchemaFile evolved) {
    return new CatalogTableEntry(id, evolved);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CatalogTableEntry
        && id.equals(((CatalogTableEntry) o).id)
        && schema.equals(((CatalogTableEntry) o).schema);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, schema);
  }
}
