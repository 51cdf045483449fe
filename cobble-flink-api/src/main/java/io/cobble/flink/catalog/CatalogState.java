package io.cobble.flink.catalog;

import io.cobble.flink.table.codec.ColumnSlots;
import io.cobble.flink.table.layout.TableSchemaFile;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.flink.table.types.logical.LogicalType;

/**
 * One version of a catalog's metadata: every database and its tables. Immutable; a change makes the
 * next version, which {@link CatalogVersions} publishes only if no other session published that
 * version first.
 *
 * <p>Payload (big-endian, strings as modified UTF-8): format (int, 1), version (long), bucket count
 * (int), database count (int), per database its name and table count (int), per table its name, id,
 * column count (int), per column name and serialized logical type, key column count (int) and
 * names, Cobble column count (int) and the Cobble column of each value column (int each).
 */
final class CatalogState {

  private static final int FORMAT = 1;

  private final long version;
  private final int buckets;
  private final Map<String, Map<String, CatalogTableEntry>> databases;

  private CatalogState(
      long version, int buckets, Map<String, Map<String, CatalogTableEntry>> databases) {
    this.version = version;
    this.buckets = buckets;
    this.databases = databases;
  }

  /** The state before anything was written: version 0, no bucket count yet. */
  static CatalogState empty() {
    return new CatalogState(0, 0, new TreeMap<>());
  }

  long version() {
    return version;
  }

  /** The catalog's bucket count, 0 before the first version. */
  int buckets() {
    return buckets;
  }

  List<String> databases() {
    return new ArrayList<>(databases.keySet());
  }

  boolean hasDatabase(String name) {
    return databases.containsKey(name);
  }

  /** The tables of a database by name; empty for an unknown database. */
  Map<String, CatalogTableEntry> tables(String database) {
    return Collections.unmodifiableMap(databases.getOrDefault(database, Collections.emptyMap()));
  }

  CatalogTableEntry table(String database, String table) {
    return tables(database).get(table);
  }

  /** The next version, with {@code buckets} fixed when this is the first one. */
  CatalogState next(int catalogBuckets) {
    return new CatalogState(version + 1, buckets == 0 ? catalogBuckets : buckets, copy());
  }

  CatalogState withDatabase(String name) {
    Map<String, Map<String, CatalogTableEntry>> changed = copy();
    changed.putIfAbsent(name, new TreeMap<>());
    return new CatalogState(version, buckets, changed);
  }

  CatalogState withoutDatabase(String name) {
    Map<String, Map<String, CatalogTableEntry>> changed = copy();
    changed.remove(name);
    return new CatalogState(version, buckets, changed);
  }

  CatalogState withTable(String database, String name, CatalogTableEntry table) {
    Map<String, Map<String, CatalogTableEntry>> changed = copy();
    changed.get(database).put(name, table);
    return new CatalogState(version, buckets, changed);
  }

  CatalogState withoutTable(String database, String name) {
    Map<String, Map<String, CatalogTableEntry>> changed = copy();
    changed.get(database).remove(name);
    return new CatalogState(version, buckets, changed);
  }

  private Map<String, Map<String, CatalogTableEntry>> copy() {
    Map<String, Map<String, CatalogTableEntry>> copy = new TreeMap<>();
    databases.forEach((name, tables) -> copy.put(name, new TreeMap<>(tables)));
    return copy;
  }

  byte[] encode() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(FORMAT);
      out.writeLong(version);
      out.writeInt(buckets);
      out.writeInt(databases.size());
      for (Map.Entry<String, Map<String, CatalogTableEntry>> database : databases.entrySet()) {
        out.writeUTF(database.getKey());
        out.writeInt(database.getValue().size());
        for (Map.Entry<String, CatalogTableEntry> table : database.getValue().entrySet()) {
          out.writeUTF(table.getKey());
          writeTable(out, table.getValue());
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("in-memory write failed", e);
    }
    return bytes.toByteArray();
  }

  private static void writeTable(DataOutputStream out, CatalogTableEntry table) throws IOException {
    TableSchemaFile schema = table.schema();
    out.writeUTF(table.id());
    List<String> names = schema.columnNames();
    List<LogicalType> types = schema.columnTypes();
    out.writeInt(names.size());
    for (int i = 0; i < names.size(); i++) {
      out.writeUTF(names.get(i));
      out.writeUTF(types.get(i).asSerializableString());
    }
    out.writeInt(schema.primaryKey().size());
    for (String key : schema.primaryKey()) {
      out.writeUTF(key);
    }
    ColumnSlots slots = schema.slots();
    out.writeInt(slots.count());
    for (int slot : slots.slots()) {
      out.writeInt(slot);
    }
  }

  static CatalogState decode(byte[] payload) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload));
    int format = in.readInt();
    if (format != FORMAT) {
      throw new IOException(
          "Catalog metadata format " + format + " is not readable by this Cobble; upgrade Cobble.");
    }
    long version = in.readLong();
    int buckets = in.readInt();
    Map<String, Map<String, CatalogTableEntry>> databases = new TreeMap<>();
    int databaseCount = in.readInt();
    for (int d = 0; d < databaseCount; d++) {
      String database = in.readUTF();
      Map<String, CatalogTableEntry> tables = new TreeMap<>();
      int tableCount = in.readInt();
      for (int t = 0; t < tableCount; t++) {
        String name = in.readUTF();
        tables.put(name, readTable(in, buckets));
      }
      databases.put(database, tables);
    }
    if (in.available() != 0) {
      throw new IOException("Catalog metadata has " + in.available() + " trailing bytes");
    }
    return new CatalogState(version, buckets, databases);
  }

  private static CatalogTableEntry readTable(DataInputStream in, int buckets) throws IOException {
    String id = in.readUTF();
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
    int count = in.readInt();
    int[] slots = new int[columns - keys];
    for (int i = 0; i < slots.length; i++) {
      slots[i] = in.readInt();
    }
    return new CatalogTableEntry(
        id, new TableSchemaFile(names, types, key, buckets, 0, new ColumnSlots(slots, count)));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CatalogState
        && version == ((CatalogState) o).version
        && buckets == ((CatalogState) o).buckets
        && databases.equals(((CatalogState) o).databases);
  }

  @Override
  public int hashCode() {
    return Objects.hash(version, buckets, databases);
  }
}
