package io.cobble.flink.catalog;

import io.cobble.flink.table.codec.ColumnSlots;
import io.cobble.flink.table.layout.TableSchemaFile;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.TableChange;
import org.apache.flink.table.catalog.exceptions.CatalogException;
import org.apache.flink.table.types.logical.LogicalType;

/**
 * Applies ALTER TABLE changes to a catalog table's schema, allowing exactly what keeps stored rows
 * readable: appending a nullable physical column (it gets a new Cobble column, so older rows read
 * NULL), dropping a non-key column (its Cobble column is left unused, never reused), renaming a
 * column (names are not stored in rows), and widening a non-key column's type (see {@link
 * CatalogTypes#widening}; narrower stored values read in the wider type). Everything else is
 * rejected with a message naming it, and nothing of the statement is applied.
 */
final class SchemaEvolution {

  private final String table;
  private final List<String> names;
  private final List<LogicalType> types;
  private final List<String> primaryKey;
  // The Cobble column of each column, -1 for key columns.
  private final List<Integer> slots;
  private int slotCount;
  private final int buckets;

  private SchemaEvolution(String table, TableSchemaFile schema) {
    this.table = table;
    this.names = new ArrayList<>(schema.columnNames());
    this.types = new ArrayList<>(schema.columnTypes());
    this.primaryKey = new ArrayList<>(schema.primaryKey());
    this.slots = new ArrayList<>();
    int value = 0;
    for (String name : names) {
      slots.add(primaryKey.contains(name) ? -1 : schema.slots().slot(value++));
    }
    this.slotCount = schema.slots().count();
    this.buckets = schema.bucketCount();
  }

  /** The schema after {@code changes}, or an exception naming the first unsupported change. */
  static TableSchemaFile apply(String table, TableSchemaFile schema, List<TableChange> changes) {
    SchemaEvolution evolution = new SchemaEvolution(table, schema);
    for (TableChange change : changes) {
      evolution.apply(change);
    }
    return evolution.result();
  }

  private void apply(TableChange change) {
    if (change instanceof TableChange.AddColumn) {
      add((TableChange.AddColumn) change);
    } else if (change instanceof TableChange.DropColumn) {
      drop(((TableChange.DropColumn) change).getColumnName());
    } else if (change instanceof TableChange.ModifyColumnName) {
      TableChange.ModifyColumnName rename = (TableChange.ModifyColumnName) change;
      rename(rename.getOldColumnName(), rename.getNewColumnName());
    } else if (change instanceof TableChange.ModifyPhysicalColumnType) {
      TableChange.ModifyPhysicalColumnType retype = (TableChange.ModifyPhysicalColumnType) change;
      retype(retype.getOldColumn().getName(), retype.getNewType().getLogicalType());
    } else if (change instanceof TableChange.ModifyColumnComment) {
      throw reject(
          "sets a comment on column '"
              + ((TableChange.ModifyColumnComment) change).getOldColumn().getName()
              + "': the Cobble catalog does not store comments");
    } else if (change instanceof TableChange.ModifyColumnPosition) {
      throw reject(
          "moves column '"
              + ((TableChange.ModifyColumnPosition) change).getOldColumn().getName()
              + "': columns keep their order (new ones are appended)");
    } else if (change instanceof TableChange.ModifyColumn) {
      modify((TableChange.ModifyColumn) change);
    } else if (change instanceof TableChange.AddUniqueConstraint
        || change instanceof TableChange.ModifyUniqueConstraint
        || change instanceof TableChange.DropConstraint) {
      throw reject("changes the PRIMARY KEY: the primary key of a Cobble table is fixed");
    } else if (change instanceof TableChange.AddWatermark
        || change instanceof TableChange.ModifyWatermark
        || change instanceof TableChange.DropWatermark) {
      throw reject("changes a WATERMARK: the Cobble catalog does not support watermarks");
    } else if (change instanceof TableChange.SetOption
        || change instanceof TableChange.ResetOption) {
      throw reject(
          "sets or resets table options: tables of the Cobble catalog take no options (pass job"
              + " settings as /*+ OPTIONS(...) */ hints)");
    } else {
      throw reject("makes a change the Cobble catalog does not support (" + change + ")");
    }
  }

  private void add(TableChange.AddColumn add) {
    Column column = add.getColumn();
    CatalogTableRules.checkColumn(table, column);
    if (!column.getDataType().getLogicalType().isNullable()) {
      throw reject(
          "adds column '"
              + column.getName()
              + "' as NOT NULL: rows already stored have no value for it, so an added column must"
              + " be nullable");
    }
    TableChange.ColumnPosition position = add.getPosition();
    boolean appended =
        position == null
            || (position instanceof TableChange.After
                && ((TableChange.After) position).column().equals(names.get(names.size() - 1)));
    if (!appended) {
      throw reject(
          "adds column '"
              + column.getName()
              + "' before other columns: new columns are appended at the end");
    }
    if (names.contains(column.getName())) {
      throw reject("adds column '" + column.getName() + "', which exists already");
    }
    names.add(column.getName());
    types.add(column.getDataType().getLogicalType());
    slots.add(slotCount++);
  }

  private void drop(String column) {
    int index = indexOf(column);
    if (primaryKey.contains(column)) {
      throw reject(
          "drops column '"
              + column
              + "' of the PRIMARY KEY "
              + primaryKey
              + ": the primary key of a Cobble table is fixed");
    }
    names.remove(index);
    types.remove(index);
    slots.remove(index);
    if (names.size() == primaryKey.size()) {
      throw reject(
          "drops column '"
              + column
              + "', the last column outside the PRIMARY KEY: a Cobble table needs at least one");
    }
  }

  private void rename(String from, String to) {
    int index = indexOf(from);
    if (names.contains(to)) {
      throw reject("renames column '" + from + "' to '" + to + "', which exists already");
    }
    names.set(index, to);
    int key = primaryKey.indexOf(from);
    if (key >= 0) {
      primaryKey.set(key, to);
    }
  }

  private void retype(String column, LogicalType to) {
    int index = indexOf(column);
    LogicalType from = types.get(index);
    if (from.equals(to)) {
      return;
    }
    if (primaryKey.contains(column)) {
      throw reject(
          "changes the type of PRIMARY KEY column '"
              + column
              + "': key columns keep their type, since stored keys are encoded with it");
    }
    CatalogTypes.unsupported(column, to)
        .ifPresent(
            reason -> {
              throw new CatalogException(reason);
            });
    CatalogTypes.widening(column, from, to)
        .ifPresent(
            reason -> {
              throw new CatalogException(reason);
            });
    types.set(index, to);
  }

  /** A MODIFY changing several attributes at once: each must be allowed on its own. */
  private void modify(TableChange.ModifyColumn modify) {
    Column from = modify.getOldColumn();
    Column to = modify.getNewColumn();
    if (!to.isPhysical()) {
      throw reject("turns column '" + from.getName() + "' into a computed or metadata column");
    }
    if (!to.getComment().equals(from.getComment())) {
      throw reject(
          "sets a comment on column '"
              + from.getName()
              + "': the Cobble catalog does not store comments");
    }
    if (modify.getNewPosition() != null) {
      throw reject(
          "moves column '"
              + from.getName()
              + "': columns keep their order (new ones are appended)");
    }
    retype(from.getName(), to.getDataType().getLogicalType());
    if (!from.getName().equals(to.getName())) {
      rename(from.getName(), to.getName());
    }
  }

  private int indexOf(String column) {
    int index = names.indexOf(column);
    if (index < 0) {
      throw reject("names column '" + column + "', which the table does not have");
    }
    return index;
  }

  private CatalogException reject(String what) {
    return new CatalogException(
        "ALTER TABLE " + table + " " + what + ". Nothing of this statement was applied.");
  }

  private TableSchemaFile result() {
    List<String> typeStrings = new ArrayList<>();
    List<Integer> valueSlots = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      typeStrings.add(types.get(i).asSerializableString());
      if (slots.get(i) >= 0) {
        valueSlots.add(slots.get(i));
      }
    }
    return new TableSchemaFile(
        names,
        typeStrings,
        primaryKey,
        buckets,
        0,
        new ColumnSlots(valueSlots.stream().mapToInt(Integer::intValue).toArray(), slotCount));
  }
}
