package io.cobble;

import io.cobble.row.ColumnLayout;
import io.cobble.row.Layouts;

/**
 * Columns of one family resolved and checked once by {@link Db#prepareColumns}, for a caller that
 * reads the same columns over and over (a lookup): each {@link Db#readColumns(int, ColumnsRead,
 * byte[], io.cobble.util.ColumnsSink)} then skips the family lookup by name and the column checks.
 * Tied to the schema it was resolved against; after a schema change a read resolves it again.
 */
public final class ColumnsRead {
  private final String family;
  private final int[] columns;
  private final Layouts layouts;
  private final ColumnLayout layout;

  ColumnsRead(String family, int[] columns, Layouts layouts) {
    this.family = family;
    this.columns = columns.clone();
    this.layouts = layouts;
    this.layout = resolve(layouts);
  }

  String family() {
    return family;
  }

  int[] columns() {
    return columns;
  }

  /** The family's layout in {@code current} (the Db's layouts now), checking the columns anew. */
  ColumnLayout layoutIn(Layouts current) {
    return current == layouts ? layout : resolve(current);
  }

  private ColumnLayout resolve(Layouts l) {
    ColumnLayout resolved = l.require(family);
    RequestChecks.checkProjection(resolved, this, columns);
    return resolved;
  }
}
