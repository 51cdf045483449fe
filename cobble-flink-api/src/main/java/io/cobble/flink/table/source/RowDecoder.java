package io.cobble.flink.table.source;

import io.cobble.Row;
import io.cobble.flink.table.codec.RowProjection;
import java.io.Serializable;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;

/** Turns a Cobble row into the SQL row the source produces. */
public interface RowDecoder extends Serializable {

  /** The SQL row of a Cobble row read with {@link #cobbleColumns()}. */
  RowData decode(Row row);

  /** The Cobble columns to read, in the order {@link #decode} expects them; null for all. */
  int[] cobbleColumns();

  /** A sink table's typed columns, only those the query reads. */
  static RowDecoder typed(RowProjection projection) {
    return new Typed(projection);
  }

  /**
   * A raw row: {@code key BYTES} and {@code columns ARRAY<BYTES>} holding the Cobble columns of
   * {@code raw.columns} in the order given, NULL where the row has no value for a column; {@code
   * fields} are the DDL positions the query reads.
   */
  static RowDecoder raw(int[] columns, int[] fields) {
    return new Raw(columns.clone(), fields.clone());
  }

  /** See {@link #typed}. */
  final class Typed implements RowDecoder {
    private static final long serialVersionUID = 1L;

    private final RowProjection projection;
    private final int[] columns;

    private Typed(RowProjection projection) {
      this.projection = projection;
      this.columns = projection.cobbleColumns();
    }

    @Override
    public RowData decode(Row row) {
      return projection.decode(row.key(), row.columns());
    }

    @Override
    public int[] cobbleColumns() {
      return columns.clone();
    }
  }

  /** See {@link #raw}. */
  final class Raw implements RowDecoder {
    private static final long serialVersionUID = 1L;

    private final int[] selected;
    private final int[] fields;

    private Raw(int[] selected, int[] fields) {
      this.selected = selected;
      this.fields = fields;
    }

    @Override
    public RowData decode(Row row) {
      byte[][] values = row.columns();
      Object[] picked = new Object[selected.length];
      for (int i = 0; i < selected.length; i++) {
        picked[i] = selected[i] < values.length ? values[selected[i]] : null;
      }
      Object[] ddl = {row.key(), new GenericArrayData(picked)};
      GenericRowData out = new GenericRowData(fields.length);
      for (int j = 0; j < fields.length; j++) {
        out.setField(j, ddl[fields[j]]);
      }
      return out;
    }

    @Override
    public int[] cobbleColumns() {
      return null;
    }
  }
}
