package io.cobble.flink.table.source;

import io.cobble.Row;
import io.cobble.flink.table.codec.ColumnSlots;
import io.cobble.flink.table.codec.RowCodec;
import java.io.Serializable;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;

/** Turns a Cobble row into the SQL row of the source's DDL. */
public interface RowDecoder extends Serializable {

  RowData decode(Row row);

  /** A sink table's typed columns, decoded with the codec the sink wrote them with. */
  static RowDecoder typed(RowType physicalRowType, int[] keyPositions, ColumnSlots slots) {
    RowCodec codec = new RowCodec(physicalRowType, keyPositions, slots);
    return row -> codec.decode(row.key(), row.columns());
  }

  /**
   * A raw row: {@code key BYTES} and {@code columns ARRAY<BYTES>} holding the Cobble columns of
   * {@code raw.columns} in the order given, NULL where the row has no value for a column.
   */
  static RowDecoder raw(int[] columns) {
    int[] selected = columns.clone();
    return row -> {
      byte[][] values = row.columns();
      Object[] picked = new Object[selected.length];
      for (int i = 0; i < selected.length; i++) {
        picked[i] = selected[i] < values.length ? values[selected[i]] : null;
      }
      return GenericRowData.of(row.key(), new GenericArrayData(picked));
    };
  }
}
