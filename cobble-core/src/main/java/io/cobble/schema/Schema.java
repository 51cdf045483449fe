package io.cobble.schema;

import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A versioned set of column families. Every change yields a new schema with the next id; files
 * record the id they were written with and compaction rewrites rows in the newest one.
 */
public final class Schema {
  private final int id;
  private final List<FamilySchema> families;

  public Schema(int id, List<FamilySchema> families) {
    this.id = id;
    this.families = Collections.unmodifiableList(new ArrayList<>(families));
  }

  public static Schema initial() {
    List<Column> cols = new ArrayList<>();
    cols.add(new Column(0, ColumnSpec.of("value")));
    List<FamilySchema> fams = new ArrayList<>();
    fams.add(new FamilySchema(0, "default", cols, 1));
    return new Schema(1, fams);
  }

  public int id() {
    return id;
  }

  public List<FamilySchema> families() {
    return families;
  }

  public FamilySchema family(String name) {
    for (FamilySchema f : families) {
      if (f.name().equals(name)) {
        return f;
      }
    }
    return null;
  }

  public List<String> familyNames() {
    List<String> names = new ArrayList<>();
    for (FamilySchema f : families) {
      names.add(f.name());
    }
    return names;
  }

  public Schema addFamily(String name, List<ColumnSpec> columns) {
    if (family(name) != null) {
      throw new IllegalArgumentException("column family '" + name + "' already exists");
    }
    if (columns.isEmpty()) {
      throw new IllegalArgumentException("column family '" + name + "' needs at least one column");
    }
    if (families.size() >= 65535) {
      throw new IllegalArgumentException("too many column families: at most 65535");
    }
    List<Column> cols = new ArrayList<>();
    for (ColumnSpec c : columns) {
      for (Column existing : cols) {
        if (existing.name().equals(c.name())) {
          throw new IllegalArgumentException(
              "duplicate column '" + c.name() + "' in family '" + name + "'");
        }
      }
      cols.add(new Column(cols.size(), c));
    }
    int nextId = 0;
    for (FamilySchema f : families) {
      nextId = Math.max(nextId, f.id() + 1);
    }
    List<FamilySchema> fams = new ArrayList<>(families);
    fams.add(new FamilySchema(nextId, name, cols, cols.size()));
    return new Schema(id + 1, fams);
  }

  public Schema addColumn(String familyName, ColumnSpec column) {
    FamilySchema f = requireFamily(familyName);
    if (f.indexOf(column.name()) >= 0) {
      throw new IllegalArgumentException(
          "column '" + column.name() + "' already exists in family '" + familyName + "'");
    }
    List<Column> cols = new ArrayList<>(f.columns());
    cols.add(new Column(f.nextColumnId(), column));
    return replace(new FamilySchema(f.id(), f.name(), cols, f.nextColumnId() + 1));
  }

  public Schema dropColumn(String familyName, String column) {
    FamilySchema f = requireFamily(familyName);
    int idx = f.indexOf(column);
    if (idx < 0) {
      throw new IllegalArgumentException(
          "unknown column '"
              + column
              + "' in family '"
              + familyName
              + "': columns are "
              + f.columnNames());
    }
    if (f.columnCount() == 1) {
      throw new IllegalArgumentException(
          "cannot drop '" + column + "': family '" + familyName + "' must keep one column");
    }
    List<Column> cols = new ArrayList<>(f.columns());
    cols.remove(idx);
    return replace(new FamilySchema(f.id(), f.name(), cols, f.nextColumnId()));
  }

  private Schema replace(FamilySchema updated) {
    List<FamilySchema> fams = new ArrayList<>();
    for (FamilySchema f : families) {
      fams.add(f.id() == updated.id() ? updated : f);
    }
    return new Schema(id + 1, fams);
  }

  public FamilySchema requireFamily(String name) {
    FamilySchema f = family(name);
    if (f == null) {
      throw new IllegalArgumentException(
          "unknown column family '" + name + "': families are " + familyNames());
    }
    return f;
  }

  public void encode(ByteWriter w) {
    w.writeVarInt(id);
    w.writeVarInt(families.size());
    for (FamilySchema f : families) {
      w.writeVarInt(f.id());
      w.writeString(f.name());
      w.writeVarInt(f.nextColumnId());
      w.writeVarInt(f.columnCount());
      for (Column c : f.columns()) {
        w.writeVarInt(c.id());
        w.writeString(c.name());
        String op = c.spec().mergeOperator();
        w.writeString(op == null ? "" : op);
        byte[] def = c.spec().defaultValue();
        w.writeByte(def == null ? 0 : 1);
        if (def != null) {
          w.writeLengthPrefixed(def);
        }
      }
    }
  }

  public static Schema decode(ByteReader r) {
    int id = r.readVarInt();
    int nf = r.readVarInt();
    List<FamilySchema> fams = new ArrayList<>();
    for (int i = 0; i < nf; i++) {
      int fid = r.readVarInt();
      String name = r.readString();
      int next = r.readVarInt();
      int nc = r.readVarInt();
      List<Column> cols = new ArrayList<>();
      for (int j = 0; j < nc; j++) {
        int cid = r.readVarInt();
        String cname = r.readString();
        String op = r.readString();
        byte[] def = r.readByte() == 1 ? r.readLengthPrefixed() : null;
        cols.add(new Column(cid, new ColumnSpec(cname, op.isEmpty() ? null : op, def)));
      }
      fams.add(new FamilySchema(fid, name, cols, next));
    }
    return new Schema(id, fams);
  }
}
