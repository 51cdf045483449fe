package io.cobble.flink.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.flink.table.layout.TableSchemaFile;
import io.cobble.storage.MetadataFile;
import io.cobble.storage.Storage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.TableChange;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two sessions changing one catalog at once, on a local path and on S3Proxy: every statement either
 * applies whole or fails with the conflict error, no change is lost, and every metadata version on
 * storage is intact.
 */
class CatalogConcurrencyTest {

  private static final int ROUNDS = 100;
  private static final int S3_ROUNDS = 30;

  @TempDir Path dir;

  private static CobbleCatalog open(String path, Map<String, String> extra) {
    Map<String, String> options = new TreeMap<>(extra);
    options.put("path", path);
    options.put("buckets", "4");
    CobbleCatalog catalog =
        new CobbleCatalog(
            "lake", "default", CatalogLocation.of(Configuration.fromMap(options), options), 4);
    catalog.open();
    return catalog;
  }

  private static ResolvedCatalogTable table() {
    ResolvedSchema schema =
        new ResolvedSchema(
            Arrays.asList(
                Column.physical("id", DataTypes.BIGINT().notNull()),
                Column.physical("v", DataTypes.STRING())),
            Collections.emptyList(),
            UniqueConstraint.primaryKey("pk", Collections.singletonList("id")));
    TableSchemaFile stored = TableSchemaFile.of(schema, 4, 0);
    return new ResolvedCatalogTable(CobbleCatalogTable.of(stored), schema);
  }

  @Test
  void twoSessionsAlterAndCreateAtOnceOnAFileWarehouse() throws Exception {
    race(dir.resolve("wh").toUri().toString(), Collections.emptyMap(), ROUNDS);
  }

  @Test
  void twoSessionsAlterAndCreateAtOnceOnS3() throws Exception {
    try (S3Fixture s3 = new S3Fixture(dir)) {
      race("s3://" + S3Fixture.BUCKET + "/warehouse", s3.catalogOptions(), S3_ROUNDS);
    }
  }

  @Test
  void aSessionWritingAfterAnotherGetsTheConflictAndChangesNothing() throws Exception {
    CobbleCatalog catalog = open(dir.resolve("wh").toUri().toString(), Collections.emptyMap());
    try (Storage storage = catalog.location().open()) {
      CatalogVersions versions = new CatalogVersions(storage, "test");
      CatalogState base = versions.latest();
      CatalogState first = base.next(4).withDatabase("first");
      versions.commit(base, first);
      CatalogConflictException conflict =
          assertThrows(
              CatalogConflictException.class,
              () -> versions.commit(base, base.next(4).withDatabase("second")));
      assertTrue(
          conflict.getMessage().contains("was changed by another session at the same time"),
          conflict.getMessage());
      assertEquals(first, versions.latest());
    } finally {
      catalog.close();
    }
  }

  private void race(String path, Map<String, String> options, int rounds) throws Exception {
    CobbleCatalog a = open(path, options);
    CobbleCatalog b = open(path, options);
    ObjectPath shared = new ObjectPath("default", "shared");
    a.createTable(shared, table(), false);
    Set<String> expectedTables = new TreeSet<>(Collections.singleton("shared"));
    List<String> expectedColumns = new ArrayList<>(Arrays.asList("id", "v"));
    int conflicts = 0;
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < rounds; round++) {
        CyclicBarrier start = new CyclicBarrier(2);
        boolean alterFirst = round % 2 == 0;
        int r = round;
        Future<List<String>> fromA = pool.submit(session(a, "a", r, alterFirst, shared, start));
        Future<List<String>> fromB = pool.submit(session(b, "b", r, !alterFirst, shared, start));
        for (List<String> applied : Arrays.asList(fromA.get(), fromB.get())) {
          for (String change : applied) {
            if (change.startsWith("table:")) {
              expectedTables.add(change.substring(6));
            } else if (change.startsWith("column:")) {
              expectedColumns.add(change.substring(7));
            } else {
              conflicts++;
            }
          }
        }
      }
    } finally {
      pool.shutdownNow();
    }
    CobbleCatalog reader = open(path, options);
    try {
      assertEquals(expectedTables, new TreeSet<>(reader.listTables("default")));
      List<String> columns =
          new ArrayList<>(
              reader.getTable(shared).getUnresolvedSchema().getColumns().stream()
                  .map(c -> c.getName())
                  .collect(java.util.stream.Collectors.toList()));
      assertEquals(
          new TreeSet<>(expectedColumns), new TreeSet<>(columns), "no applied ALTER is lost");
      assertEquals(expectedColumns.size(), columns.size());
      assertAllVersionsIntact(reader);
      System.out.println(
          "catalog race on " + path + ": " + rounds + " rounds, " + conflicts + " conflicts");
    } finally {
      a.close();
      b.close();
      reader.close();
    }
  }

  /**
   * One session's round: an ALTER TABLE ADD on the shared table and a CREATE TABLE, in the given
   * order, each either applied or refused with the conflict error.
   */
  private static Callable<List<String>> session(
      CobbleCatalog catalog,
      String name,
      int round,
      boolean alterFirst,
      ObjectPath shared,
      CyclicBarrier start) {
    return () -> {
      List<String> applied = new ArrayList<>();
      start.await();
      for (int step = 0; step < 2; step++) {
        boolean alter = (step == 0) == alterFirst;
        try {
          if (alter) {
            String column = "c_" + round + "_" + name;
            catalog.alterTable(
                shared,
                table(),
                Collections.singletonList(
                    TableChange.add(Column.physical(column, DataTypes.STRING()))),
                false);
            applied.add("column:" + column);
          } else {
            String table = name + "_" + round;
            catalog.createTable(new ObjectPath("default", table), table(), false);
            applied.add("table:" + table);
          }
        } catch (CatalogConflictException e) {
          assertTrue(e.getMessage().contains("This statement changed nothing"), e.getMessage());
          applied.add("conflict");
        }
      }
      return applied;
    };
  }

  private static void assertAllVersionsIntact(CobbleCatalog catalog) throws Exception {
    try (Storage storage = catalog.location().open()) {
      List<String> files = storage.list(CatalogVersions.DIRECTORY);
      assertTrue(!files.isEmpty());
      for (String file : files) {
        Optional<byte[]> payload = MetadataFile.decode(storage.readAll(file));
        assertTrue(payload.isPresent(), file + " is intact");
        CatalogState state = CatalogState.decode(payload.get());
        assertEquals(CatalogVersions.path(state.version()), file);
      }
    }
  }
}
