package io.cobble.flink.catalog;

import org.apache.flink.table.catalog.exceptions.CatalogException;

/**
 * Another session changed the catalog's metadata between this session's read and its write. The
 * statement changed nothing; running it again applies it to the new metadata.
 */
public final class CatalogConflictException extends CatalogException {

  private static final long serialVersionUID = 1L;

  CatalogConflictException(String message) {
    super(message);
  }
}
