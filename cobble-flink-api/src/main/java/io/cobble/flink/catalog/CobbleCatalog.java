package io.cobble.flink.catalog;

import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.storage.Storage;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.AbstractCatalog;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.CatalogDatabase;
import org.apache.flink.table.catalog.CatalogFunction;
import org.apache.flink.table.catalog.CatalogPartition;
import org.apache.flink.table.catalog.CatalogPartitionSpec;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.table.catalog.TableChange;
import org.apache.flink.table.catalog.exceptions.CatalogException;
import org.apache.flink.table.catalog.exceptions.DatabaseAlreadyExistException;
import org.apache.flink.table.catalog.exceptions.DatabaseNotEmptyException;
import org.apache.flink.table.catalog.exceptions.DatabaseNotExistException;
import org.apache.flink.table.catalog.exceptions.FunctionNotExistException;
import org.apache.flink.table.catalog.exceptions.PartitionNotExistException;
import org.apache.flink.table.catalog.exceptions.TableAlreadyExistException;
import org.apache.flink.table.catalog.exceptions.TableNotExistException;
import org.apache.flink.table.catalog.exceptions.TableNotPartitionedException;
import org.apache.flink.table.catalog.stats.CatalogColumnStatistics;
import org.apache.flink.table.catalog.stats.CatalogTableStatistics;
import org.apache.flink.table.expressions.Expression;
import org.apache.flink.table.factories.Factory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Cobble catalog: databases and typed tables kept in versioned metadata under {@code
 * <path>/<storage-id>/}, each table's data in its own directory there, written and read by the
 * Cobble sink and source (see {@link CatalogTableFactory}). Every statement reads the newest
 * metadata version and, if it changes something, publishes the next one; when another session
 * published it first the statement fails with a {@link CatalogConflictException} and changes
 * nothing. A dropped table's files are deleted after its removal is published.
 */
public final class CobbleCatalog extends AbstractCatalog {

  private static final Logger LOG = LoggerFactory.getLogger(CobbleCatalog.class);

  /** Attempts to create the default database while other sessions open the same catalog. */
  private static final int OPEN_ATTEMPTS = 5;

  private final CatalogLocation location;
  private final int buckets;
  private Storage storage;
  private CatalogVersions versions;

  CobbleCatalog(String name, String defaultDatabase, CatalogLocation location, int buckets) {
    super(name, defaultDatabase);
    this.location = location;
    this.buckets = buckets;
  }

  CatalogLocation location() {
    return location;
  }

  @Override
  public void open() {
    try {
      storage = location.open();
    } catch (IOException | RuntimeException e) {
      throw new CatalogException(
          "Cannot open the storage of Cobble catalog '" + getName() + "' at " + location, e);
    }
    versions = new CatalogVersions(storage, location.toString());
    for (int attempt = 1; ; attempt++) {
      CatalogState state = versions.latest();
      if (state.buckets() != 0 && state.buckets() != buckets) {
        throw new ValidationException(
            "Option '"
                + CobbleCatalogOptions.BUCKETS.key()
                + "' is "
                + buckets
                + ", but the Cobble catalog at "
                + location
                + " was created with "
                + state.buckets()
                + " buckets, which its tables keep. Set 'buckets' = '"
                + state.buckets()
                + "'.");
      }
      if (state.hasDatabase(getDefaultDatabase())) {
        return;
      }
      try {
        versions.commit(state, state.next(buckets).withDatabase(getDefaultDatabase()));
        return;
      } catch (CatalogConflictException e) {
        if (attempt == OPEN_ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  @Override
  public void close() {
    if (storage != null) {
      try {
        storage.close();
      } catch (IOException e) {
        LOG.warn("Cannot close the storage of Cobble catalog {}", getName(), e);
      }
      storage = null;
    }
  }

  @Override
  public Optional<Factory> getFactory() {
    return Optional.of(new CatalogTableFactory(this));
  }

  private CatalogState state() {
    if (versions == null) {
      throw new CatalogException("Cobble catalog '" + getName() + "' is not open.");
    }
    return versions.latest();
  }

  /** The table a query plans with, or a message that it is gone. */
  CatalogTableEntry entryFor(ObjectIdentifier id) {
    CatalogTableEntry entry = state().table(id.getDatabaseName(), id.getObjectName());
    if (entry == null) {
      throw new ValidationException(
          "Catalog table "
              + id.asSummaryString()
              + " was dropped while the statement was planned.");
    }
    return entry;
  }

  // ---- databases

  @Override
  public List<String> listDatabases() {
    return state().databases();
  }

  @Override
  public CatalogDatabase getDatabase(String databaseName) throws DatabaseNotExistException {
    if (!state().hasDatabase(databaseName)) {
      throw new DatabaseNotExistException(getName(), databaseName);
    }
    return new CobbleCatalogDatabase();
  }

  @Override
  public boolean databaseExists(String databaseName) {
    return state().hasDatabase(databaseName);
  }

  @Override
  public void createDatabase(String name, CatalogDatabase database, boolean ignoreIfExists)
      throws DatabaseAlreadyExistException {
    if (database.getComment() != null && !database.getComment().isEmpty()) {
      throw new CatalogException(
          "Database '" + name + "' has a COMMENT: the Cobble catalog does not store comments.");
    }
    if (!database.getProperties().isEmpty()) {
      throw new CatalogException(
          "Database '"
              + name
              + "' has properties "
              + database.getProperties().keySet()
              + ": databases of the Cobble catalog take no WITH properties.");
    }
    CatalogState state = state();
    if (state.hasDatabase(name)) {
      if (ignoreIfExists) {
        return;
      }
      throw new DatabaseAlreadyExistException(getName(), name);
    }
    versions.commit(state, state.next(buckets).withDatabase(name));
  }

  @Override
  public void dropDatabase(String name, boolean ignoreIfNotExists, boolean cascade)
      throws DatabaseNotExistException, DatabaseNotEmptyException {
    CatalogState state = state();
    if (!state.hasDatabase(name)) {
      if (ignoreIfNotExists) {
        return;
      }
      throw new DatabaseNotExistException(getName(), name);
    }
    Map<String, CatalogTableEntry> tables = state.tables(name);
    if (!tables.isEmpty() && !cascade) {
      throw new DatabaseNotEmptyException(getName(), name);
    }
    versions.commit(state, state.next(buckets).withoutDatabase(name));
    tables.values().forEach(this::deleteFiles);
  }

  @Override
  public void alterDatabase(String name, CatalogDatabase newDatabase, boolean ignoreIfNotExists)
      throws DatabaseNotExistException {
    if (!state().hasDatabase(name)) {
      if (ignoreIfNotExists) {
        return;
      }
      throw new DatabaseNotExistException(getName(), name);
    }
    throw new CatalogException(
        "ALTER DATABASE "
            + name
            + ": databases of the Cobble catalog have no properties or comment to change.");
  }

  // ---- tables

  @Override
  public List<String> listTables(String databaseName) throws DatabaseNotExistException {
    CatalogState state = state();
    if (!state.hasDatabase(databaseName)) {
      throw new DatabaseNotExistException(getName(), databaseName);
    }
    return new ArrayList<>(state.tables(databaseName).keySet());
  }

  @Override
  public List<String> listViews(String databaseName) throws DatabaseNotExistException {
    if (!state().hasDatabase(databaseName)) {
      throw new DatabaseNotExistException(getName(), databaseName);
    }
    return Collections.emptyList();
  }

  @Override
  public CatalogBaseTable getTable(ObjectPath tablePath) throws TableNotExistException {
    CatalogTableEntry entry = state().table(tablePath.getDatabaseName(), tablePath.getObjectName());
    if (entry == null) {
      throw new TableNotExistException(getName(), tablePath);
    }
    return CobbleCatalogTable.of(entry.schema());
  }

  @Override
  public boolean tableExists(ObjectPath tablePath) {
    return state().table(tablePath.getDatabaseName(), tablePath.getObjectName()) != null;
  }

  @Override
  public void createTable(ObjectPath tablePath, CatalogBaseTable table, boolean ignoreIfExists)
      throws TableAlreadyExistException, DatabaseNotExistException {
    TableSchemaFile schema = CatalogTableRules.checkCreate(tablePath.getFullName(), table, buckets);
    CatalogState state = state();
    if (!state.hasDatabase(tablePath.getDatabaseName())) {
      throw new DatabaseNotExistException(getName(), tablePath.getDatabaseName());
    }
    if (state.table(tablePath.getDatabaseName(), tablePath.getObjectName()) != null) {
      if (ignoreIfExists) {
        return;
      }
      throw new TableAlreadyExistException(getName(), tablePath);
    }
    CatalogTableEntry entry = new CatalogTableEntry(UUID.randomUUID().toString(), schema);
    versions.commit(
        state,
        state
            .next(buckets)
            .withTable(tablePath.getDatabaseName(), tablePath.getObjectName(), entry));
  }

  @Override
  public void dropTable(ObjectPath tablePath, boolean ignoreIfNotExists)
      throws TableNotExistException {
    CatalogState state = state();
    CatalogTableEntry entry = state.table(tablePath.getDatabaseName(), tablePath.getObjectName());
    if (entry == null) {
      if (ignoreIfNotExists) {
        return;
      }
      throw new TableNotExistException(getName(), tablePath);
    }
    versions.commit(
        state,
        state.next(buckets).withoutTable(tablePath.getDatabaseName(), tablePath.getObjectName()));
    deleteFiles(entry);
  }

  @Override
  public void renameTable(ObjectPath tablePath, String newTableName, boolean ignoreIfNotExists)
      throws TableNotExistException, TableAlreadyExistException {
    CatalogState state = state();
    String database = tablePath.getDatabaseName();
    CatalogTableEntry entry = state.table(database, tablePath.getObjectName());
    if (entry == null) {
      if (ignoreIfNotExists) {
        return;
      }
      throw new TableNotExistException(getName(), tablePath);
    }
    if (state.table(database, newTableName) != null) {
      throw new TableAlreadyExistException(getName(), new ObjectPath(database, newTableName));
    }
    versions.commit(
        state,
        state
            .next(buckets)
            .withoutTable(database, tablePath.getObjectName())
            .withTable(database, newTableName, entry));
  }

  @Override
  public void alterTable(ObjectPath tablePath, CatalogBaseTable newTable, boolean ignoreIfNotExists)
      throws TableNotExistException {
    CatalogTableEntry entry = state().table(tablePath.getDatabaseName(), tablePath.getObjectName());
    if (entry == null) {
      if (ignoreIfNotExists) {
        return;
      }
      throw new TableNotExistException(getName(), tablePath);
    }
    alter(
        tablePath,
        ignoreIfNotExists,
        AlterDiff.changes(tablePath.getFullName(), entry.schema(), newTable));
  }

  @Override
  public void alterTable(
      ObjectPath tablePath,
      CatalogBaseTable newTable,
      List<TableChange> tableChanges,
      boolean ignoreIfNotExists)
      throws TableNotExistException {
    alter(tablePath, ignoreIfNotExists, tableChanges);
  }

  private void alter(ObjectPath tablePath, boolean ignoreIfNotExists, List<TableChange> changes)
      throws TableNotExistException {
    CatalogState state = state();
    String database = tablePath.getDatabaseName();
    CatalogTableEntry entry = state.table(database, tablePath.getObjectName());
    if (entry == null) {
      if (ignoreIfNotExists) {
        return;
      }
      throw new TableNotExistException(getName(), tablePath);
    }
    TableSchemaFile evolved =
        SchemaEvolution.apply(tablePath.getFullName(), entry.schema(), changes);
    if (evolved.equals(entry.schema())) {
      return;
    }
    versions.commit(
        state,
        state
            .next(buckets)
            .withTable(database, tablePath.getObjectName(), entry.withSchema(evolved)));
  }

  /** Deletes a dropped table's files; what a failure leaves is only garbage, and is logged. */
  private void deleteFiles(CatalogTableEntry entry) {
    String directory = CatalogLocation.TABLES + entry.id() + "/";
    try {
      storage.deleteAll(storage.list(directory));
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "Cannot delete the files of a dropped table under {}{}; delete them by hand",
          location,
          directory,
          e);
    }
  }

  // ---- partitions: catalog tables are never partitioned

  @Override
  public List<CatalogPartitionSpec> listPartitions(ObjectPath tablePath)
      throws TableNotExistException, TableNotPartitionedException {
    throw notPartitioned(tablePath);
  }

  @Override
  public List<CatalogPartitionSpec> listPartitions(
      ObjectPath tablePath, CatalogPartitionSpec partitionSpec)
      throws TableNotExistException, TableNotPartitionedException {
    throw notPartitioned(tablePath);
  }

  @Override
  public List<CatalogPartitionSpec> listPartitionsByFilter(
      ObjectPath tablePath, List<Expression> filters)
      throws TableNotExistException, TableNotPartitionedException {
    throw notPartitioned(tablePath);
  }

  @Override
  public CatalogPartition getPartition(ObjectPath tablePath, CatalogPartitionSpec partitionSpec)
      throws PartitionNotExistException {
    throw new PartitionNotExistException(getName(), tablePath, partitionSpec);
  }

  @Override
  public boolean partitionExists(ObjectPath tablePath, CatalogPartitionSpec partitionSpec) {
    return false;
  }

  @Override
  public void createPartition(
      ObjectPath tablePath,
      CatalogPartitionSpec partitionSpec,
      CatalogPartition partition,
      boolean ignoreIfExists)
      throws TableNotExistException, TableNotPartitionedException {
    throw notPartitioned(tablePath);
  }

  @Override
  public void dropPartition(
      ObjectPath tablePath, CatalogPartitionSpec partitionSpec, boolean ignoreIfNotExists)
      throws PartitionNotExistException {
    throw new PartitionNotExistException(getName(), tablePath, partitionSpec);
  }

  @Override
  public void alterPartition(
      ObjectPath tablePath,
      CatalogPartitionSpec partitionSpec,
      CatalogPartition newPartition,
      boolean ignoreIfNotExists)
      throws PartitionNotExistException {
    throw new PartitionNotExistException(getName(), tablePath, partitionSpec);
  }

  private TableNotPartitionedException notPartitioned(ObjectPath tablePath)
      throws TableNotExistException {
    if (!tableExists(tablePath)) {
      throw new TableNotExistException(getName(), tablePath);
    }
    return new TableNotPartitionedException(getName(), tablePath);
  }

  // ---- functions: none

  @Override
  public List<String> listFunctions(String dbName) throws DatabaseNotExistException {
    if (!databaseExists(dbName)) {
      throw new DatabaseNotExistException(getName(), dbName);
    }
    return Collections.emptyList();
  }

  @Override
  public CatalogFunction getFunction(ObjectPath functionPath) throws FunctionNotExistException {
    throw new FunctionNotExistException(getName(), functionPath);
  }

  @Override
  public boolean functionExists(ObjectPath functionPath) {
    return false;
  }

  @Override
  public void createFunction(
      ObjectPath functionPath, CatalogFunction function, boolean ignoreIfExists) {
    throw new CatalogException(
        "The Cobble catalog does not store functions; create "
            + functionPath.getFullName()
            + " as a temporary function or in another catalog.");
  }

  @Override
  public void alterFunction(
      ObjectPath functionPath, CatalogFunction newFunction, boolean ignoreIfNotExists)
      throws FunctionNotExistException {
    if (!ignoreIfNotExists) {
      throw new FunctionNotExistException(getName(), functionPath);
    }
  }

  @Override
  public void dropFunction(ObjectPath functionPath, boolean ignoreIfNotExists)
      throws FunctionNotExistException {
    if (!ignoreIfNotExists) {
      throw new FunctionNotExistException(getName(), functionPath);
    }
  }

  // ---- statistics: not kept

  @Override
  public CatalogTableStatistics getTableStatistics(ObjectPath tablePath) {
    return CatalogTableStatistics.UNKNOWN;
  }

  @Override
  public CatalogColumnStatistics getTableColumnStatistics(ObjectPath tablePath) {
    return CatalogColumnStatistics.UNKNOWN;
  }

  @Override
  public CatalogTableStatistics getPartitionStatistics(
      ObjectPath tablePath, CatalogPartitionSpec partitionSpec) {
    return CatalogTableStatistics.UNKNOWN;
  }

  @Override
  public CatalogColumnStatistics getPartitionColumnStatistics(
      ObjectPath tablePath, CatalogPartitionSpec partitionSpec) {
    return CatalogColumnStatistics.UNKNOWN;
  }

  @Override
  public void alterTableStatistics(
      ObjectPath tablePath, CatalogTableStatistics tableStatistics, boolean ignoreIfNotExists) {
    // Statistics are not kept: the planner works without them.
  }

  @Override
  public void alterTableColumnStatistics(
      ObjectPath tablePath, CatalogColumnStatistics columnStatistics, boolean ignoreIfNotExists) {
    // Statistics are not kept.
  }

  @Override
  public void alterPartitionStatistics(
      ObjectPath tablePath,
      CatalogPartitionSpec partitionSpec,
      CatalogTableStatistics partitionStatistics,
      boolean ignoreIfNotExists) {
    // Statistics are not kept.
  }

  @Override
  public void alterPartitionColumnStatistics(
      ObjectPath tablePath,
      CatalogPartitionSpec partitionSpec,
      CatalogColumnStatistics columnStatistics,
      boolean ignoreIfNotExists) {
    // Statistics are not kept.
  }
}
