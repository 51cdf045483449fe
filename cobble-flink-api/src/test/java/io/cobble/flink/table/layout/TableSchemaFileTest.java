package io.cobble.flink.table.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.Optional;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TableSchemaFileTest {

  @TempDir Path dir;

  static ResolvedSchema schema(String... columnsAndTypes) {
    Column[] columns = new Column[columnsAndTypes.length / 2];
    for (int i = 0; i < columns.length; i++) {
      String type = columnsAndTypes[2 * i + 1];
      columns[i] =
          Column.physical(
              columnsAndTypes[2 * i],
              type.equals("BIGINT NOT NULL")
                  ? DataTypes.BIGINT().notNull()
                  : type.equals("INT") ? DataTypes.INT() : DataTypes.DECIMAL(12, 2));
    }
    return new ResolvedSchema(
        Arrays.asList(columns),
        Collections.emptyList(),
        UniqueConstraint.primaryKey("pk", Collections.singletonList(columns[0].getName())));
  }

  @Test
  void publishesAndReadsBackThroughMetadataFile() throws Exception {
    TableSchemaFile file =
        TableSchemaFile.of(schema("id", "BIGINT NOT NULL", "amount", "DECIMAL"), 16, 4);
    try (Storage storage = StorageProviders.open(dir.toUri(), StorageOptions.empty())) {
      assertEquals(Optional.empty(), TableSchemaFile.read(storage));
      file.publish(storage);
      TableSchemaFile back = TableSchemaFile.read(storage).get();
      assertEquals(file, back);
      assertEquals(Arrays.asList("id", "amount"), back.columnNames());
      assertEquals(
          Arrays.asList(new BigIntType(false), new DecimalType(12, 2)), back.columnTypes());
      assertEquals(Collections.singletonList("id"), back.primaryKey());
      assertEquals(16, back.bucketCount());
      assertEquals(4, back.shardCount());
    }
    assertTrue(dir.resolve("schema").resolve("table-schema").toFile().isFile());
  }

  @Test
  void namesTheFirstMismatchingColumn() {
    TableSchemaFile stored = TableSchemaFile.of(schema("id", "BIGINT NOT NULL", "v", "INT"), 4, 1);
    assertFalse(
        stored
            .firstColumnMismatch(
                TableSchemaFile.of(schema("id", "BIGINT NOT NULL", "v", "INT"), 0, 0))
            .isPresent());
    assertEquals(
        "column 'v' is DECIMAL(12, 2) in the DDL but INT in the table",
        stored
            .firstColumnMismatch(
                TableSchemaFile.of(schema("id", "BIGINT NOT NULL", "v", "DECIMAL"), 0, 0))
            .get());
    assertEquals(
        "column 2 is 'w' in the DDL but 'v' in the table",
        stored
            .firstColumnMismatch(
                TableSchemaFile.of(schema("id", "BIGINT NOT NULL", "w", "INT"), 0, 0))
            .get());
    assertEquals(
        "column 'x' is in the DDL but not in the table",
        stored
            .firstColumnMismatch(
                TableSchemaFile.of(schema("id", "BIGINT NOT NULL", "v", "INT", "x", "INT"), 0, 0))
            .get());
  }

  @Test
  void keepsTheCobbleColumnsOfAnEvolvedTable() throws Exception {
    TableSchemaFile evolved =
        new TableSchemaFile(
            Arrays.asList("id", "a", "b"),
            Arrays.asList("BIGINT NOT NULL", "INT", "INT"),
            Collections.singletonList("id"),
            8,
            2,
            new io.cobble.flink.table.codec.ColumnSlots(new int[] {2, 0}, 3));
    try (Storage storage = StorageProviders.open(dir.toUri(), StorageOptions.empty())) {
      evolved.publish(storage);
      TableSchemaFile back = TableSchemaFile.read(storage).get();
      assertEquals(evolved, back);
      assertEquals(evolved.slots(), back.slots());
      assertFalse(
          back.equals(
              evolved.withSlotsOf(
                  TableSchemaFile.of(
                      schema("id", "BIGINT NOT NULL", "a", "INT", "b", "INT"), 8, 2))));
    }
  }
}
