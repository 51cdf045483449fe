package io.cobble.schema;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One column family: its id (the tree it lives in), name and ordered columns. Rows store column
 * ids, so dropping or adding a column never rewrites files: readers map ids to positions.
 */
public final class FamilySchema {
  private final int id;
  private final String name;
  private final List<Column> columns;
  private final int nextColumnId;

  public FamilySchema(int id, String name, List<Column> columns, int nextColumnId) {
    this.id = id;
    this.name = name;
    this.columns = Collections.unmodifiableList(new ArrayList<>(columns));
    this.nextColumnId = nextColumnId;
  }

  public int id() {
    return id;
  }

  public String name() {
    return name;
  }

  public List<Column> columns() {
    return columns;
  }

  public int columnCount() {
    return columns.size();
  }

  public int nextColumnId() {
    return nextColumnId;
  }

  /** Position of a column name, or -1. */
  public int indexOf(String column) {
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equals(column)) {
        return i;
      }
    }
    return -1;
  }

  public List<String> columnNames() {
    List<String> names = new ArrayList<>();
    for (Column c : columns) {
      names.add(c.name());
    }
    return names;
  }
}
