package io.cobble.flink.table.layout;

import io.cobble.flink.table.codec.ColumnSlots;
import io.cobble.storage.MetadataFile;
import io.cobble.storage.Storage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.utils.LogicalTypeParser;

/**
 * The inspect schema of a sink table, published beside the shards at {@code
 * <path>/schema/table-schema} as a {@link MetadataFile}: the physical columns (name and {@link
 * LogicalType#asSerializableString()}), the primary key, the bucket count and the shard count. It
 * lets a reader expose typed columns without the writing job, and lets every later writer or reader
 * check that its DDL still describes the stored rows.
 *
 * <p>Payload (big-endian, strings as modified UTF-8): format version (int, 1 or 2), bucket count
 * (int), shard count (int), column count (int), per column name and type string, key column count
 * (int), key column names; format 2 (written only for a table whose value columns are not stored in
 * Cobble columns 0, 1, ... in order, see {@link ColumnSlots}) adds the Cobble column count (int)
 * and the Cobble column of each value column (int each).
 */
public final class TableSchemaFile implements Serializable {

  private static final long serialVersionUID = 1L;

  public static final String PATH = TableLayout.SCHEMA_DIRECTORY + "/table-schema";

  private static final int FORMAT = 1;
  private static final int FORMAT_WITH_SLOTS = 2;

  private final List<String> columnNames;
  private final List<String> columnTypes;
  private final List<String> primaryKey;
  private final int bucketCount;
  private final int shardCount;
  private final ColumnSlots slots;

  public TableSchemaFile(
      List<String> columnNames,
      List<String> columnTypes,
      List<String> primaryKey,
      int bucketCount,
      int shardCount) {
    this(columnNames, columnTypes, primaryKey, bucketCount, shardCount, null);
  }

  /**
   * @param slots the Cobble column of each value column; null for value column {@code i} in Cobble
   *     column {@code i}
   */
  public TableSchemaFile(
      List<String> columnNames,
      List<String> columnTypes,
      List<String> primaryKey,
      int bucketCount,
      int shardCount,
      ColumnSlots slots) {
    if (columnNames.size() != columnTypes.size()) {
      throw new IllegalArgumentException("one type per column expected");
    }
    this.columnNames = Collections.unmodifiableList(new ArrayList<>(columnNames));
    this.columnTypes = Collections.unmodifiableList(new ArrayList<>(columnTypes));
    this.primaryKey = Collections.unmodifiableList(new ArrayList<>(primaryKey));
    this.bucketCount = bucketCount;
    this.shardCount = shardCount;
    int valueColumns = (int) columnNames.stream().filter(c -> !primaryKey.contains(c)).count();
    this.slots = slots == null ? ColumnSlots.identity(valueColumns) : slots;
    if (this.slots.valueColumns() != valueColumns) {
      throw new IllegalArgumentException(
          "Cobble columns " + this.slots + " for " + valueColumns + " value columns");
    }
  }

  /** The schema a DDL declares; {@code bucketCount} and {@code shardCount} may be 0 (unknown). */
  public static TableSchemaFile of(ResolvedSchema schema, int bucketCount, int shardCount) {
    List<String> names = new ArrayList<>();
    List<String> types = new ArrayList<>();
    for (Column column : schema.getColumns()) {
      if (column.isPhysical()) {
        names.add(column.getName());
        types.add(column.getDataType().getLogicalType().asSerializableString());
      }
    }
    List<String> key =
        schema.getPrimaryKey().map(UniqueConstraint::getColumns).orElse(Collections.emptyList());
    return new TableSchemaFile(names, types, key, bucketCount, shardCount);
  }

  public List<String> columnNames() {
    return columnNames;
  }

  /** The column types as Flink logical types. */
  public List<LogicalType> columnTypes() {
    List<LogicalType> types = new ArrayList<>();
    for (String type : columnTypes) {
      types.add(parse(type));
    }
    return types;
  }

  public List<String> primaryKey() {
    return primaryKey;
  }

  public int bucketCount() {
    return bucketCount;
  }

  public int shardCount() {
    return shardCount;
  }

  /** Where the value columns are stored. */
  public ColumnSlots slots() {
    return slots;
  }

  /** This schema with another shard count (a sink's writer count). */
  public TableSchemaFile withShardCount(int shards) {
    return new TableSchemaFile(columnNames, columnTypes, primaryKey, bucketCount, shards, slots);
  }

  /** This schema with the Cobble columns of {@code stored} (same columns, as published). */
  public TableSchemaFile withSlotsOf(TableSchemaFile stored) {
    return new TableSchemaFile(
        columnNames, columnTypes, primaryKey, bucketCount, shardCount, stored.slots);
  }

  /**
   * How {@code declared} (a DDL) differs from this stored schema in columns or primary key, naming
   * the first column that differs; empty when the columns and key match.
   */
  public Optional<String> firstColumnMismatch(TableSchemaFile declared) {
    int common = Math.min(columnNames.size(), declared.columnNames.size());
    for (int i = 0; i < common; i++) {
      if (!columnNames.get(i).equals(declared.columnNames.get(i))) {
        return Optional.of(
            "column "
                + (i + 1)
                + " is '"
                + declared.columnNames.get(i)
                + "' in the DDL but '"
                + columnNames.get(i)
                + "' in the table");
      }
      if (!columnTypes.get(i).equals(declared.columnTypes.get(i))) {
        return Optional.of(
            "column '"
                + columnNames.get(i)
                + "' is "
                + readable(declared.columnTypes.get(i))
                + " in the DDL but "
                + readable(columnTypes.get(i))
                + " in the table");
      }
    }
    if (declared.columnNames.size() > common) {
      return Optional.of(
          "column '" + declared.columnNames.get(common) + "' is in the DDL but not in the table");
    }
    if (columnNames.size() > common) {
      return Optional.of(
          "column '" + columnNames.get(common) + "' is in the table but not in the DDL");
    }
    if (!primaryKey.equals(declared.primaryKey)) {
      return Optional.of(
          "the PRIMARY KEY is "
              + declared.primaryKey
              + " in the DDL but "
              + primaryKey
              + " in the table");
    }
    return Optional.empty();
  }

  /** A type as users write it in DDL ({@code STRING} rather than {@code VARCHAR(2147483647)}). */
  private static String readable(String serializedType) {
    return parse(serializedType).asSummaryString();
  }

  private static LogicalType parse(String serializedType) {
    return LogicalTypeParser.parse(serializedType, TableSchemaFile.class.getClassLoader());
  }

  /** Reads the schema published under a table root; empty when there is none (yet). */
  public static Optional<TableSchemaFile> read(Storage tableRoot) throws IOException {
    Optional<byte[]> payload = MetadataFile.read(tableRoot, PATH);
    return payload.isPresent() ? Optional.of(decode(payload.get())) : Optional.empty();
  }

  /** Publishes this schema under a table root, atomically. */
  public void publish(Storage tableRoot) throws IOException {
    MetadataFile.publish(tableRoot, PATH, encode());
  }

  byte[] encode() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(slots.isIdentity() ? FORMAT : FORMAT_WITH_SLOTS);
      out.writeInt(bucketCount);
      out.writeInt(shardCount);
      out.writeInt(columnNames.size());
      for (int i = 0; i < columnNames.size(); i++) {
        out.writeUTF(columnNames.get(i));
        out.writeUTF(columnTypes.get(i));
      }
      out.writeInt(primaryKey.size());
      for (String key : primaryKey) {
        out.writeUTF(key);
      }
      if (!slots.isIdentity()) {
        out.writeInt(slots.count());
        for (int slot : slots.slots()) {
          out.writeInt(slot);
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("in-memory write failed", e);
    }
    return bytes.toByteArray();
  }

  static TableSchemaFile decode(byte[] payload) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload));
    int format = in.readInt();
    if (format != FORMAT && format != FORMAT_WITH_SLOTS) {
      throw new IOException(
          "Table schema format " + format + " is not readable by this Cobble; upgrade Cobble.");
    }
    int buckets = in.readInt();
    int shards = in.readInt();
    int columns = in.readInt();
    List<String> names = new ArrayList<>();
    List<String> types = new ArrayList<>();
    for (int i = 0; i < columns; i++) {
      names.add(in.readUTF());
      types.add(in.readUTF());
    }
    int keys = in.readInt();
    List<String> key = new ArrayList<>();
    for (int i = 0; i < keys; i++) {
      key.add(in.readUTF());
    }
    ColumnSlots slots = null;
    if (format == FORMAT_WITH_SLOTS) {
      int count = in.readInt();
      int[] values = new int[columns - keys];
      for (int i = 0; i < values.length; i++) {
        values[i] = in.readInt();
      }
      slots = new ColumnSlots(values, count);
    }
    return new TableSchemaFile(names, types, key, buckets, shards, slots);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof TableSchemaFile)) {
      return false;
    }
    TableSchemaFile other = (TableSchemaFile) o;
    return bucketCount == other.bucketCount
        && shardCount == other.shardCount
        && slots.equals(other.slots)
        && columnNames.equals(other.columnNames)
        && columnTypes.equals(other.columnTypes)
        && primaryKey.equals(other.primaryKey);
  }

  @Override
  public int hashCode() {
    return Objects.hash(columnNames, columnTypes, primaryKey, bucketCount, shardCount, slots);
  }

  @Override
  public String toString() {
    return "TableSchemaFile{columns="
        + columnNames
        + ", types="
        + columnTypes
        + ", primaryKey="
        + primaryKey
        + ", buckets="
        + bucketCount
        + ", shards="
        + shardCount
        + (slots.isIdentity() ? "" : ", cobbleColumns=" + slots)
        + "}";
  }
}
