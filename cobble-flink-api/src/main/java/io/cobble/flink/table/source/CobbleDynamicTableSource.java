package io.cobble.flink.table.source;

import io.cobble.flink.table.codec.ColumnSlots;
import io.cobble.flink.table.codec.KeyEncoder;
import io.cobble.flink.table.codec.RowCodec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.SourceProvider;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/**
 * The Cobble SQL source of a validated table: a {@link CobbleSource} scan, and for sink tables
 * exact primary-key lookups. Rules that depend on the query (the lookup key) are checked here.
 */
public final class CobbleDynamicTableSource implements ScanTableSource, LookupTableSource {

  private final SourceSettings settings;
  private final RowType rowType;
  private final int[] keyPositions;
  private final int buckets;
  private final int[] rawColumns;
  private final ColumnSlots slots;

  private CobbleDynamicTableSource(
      SourceSettings settings,
      RowType rowType,
      int[] keyPositions,
      int buckets,
      int[] rawColumns,
      ColumnSlots slots) {
    this.settings = settings;
    this.rowType = rowType;
    this.keyPositions = keyPositions;
    this.buckets = buckets;
    this.rawColumns = rawColumns;
    this.slots = slots;
  }

  /**
   * A sink table's typed source; {@code keyPositions} are the primary key's physical positions,
   * {@code slots} the Cobble columns of its value columns.
   */
  public static CobbleDynamicTableSource sinkTable(
      SourceSettings settings,
      RowType rowType,
      int[] keyPositions,
      int buckets,
      ColumnSlots slots) {
    return new CobbleDynamicTableSource(
        settings, rowType, keyPositions.clone(), buckets, null, slots);
  }

  /** A raw source of the Cobble columns {@code rawColumns}. */
  public static CobbleDynamicTableSource raw(
      SourceSettings settings, RowType rowType, int[] rawColumns) {
    return new CobbleDynamicTableSource(settings, rowType, new int[0], 0, rawColumns.clone(), null);
  }

  private boolean isRaw() {
    return rawColumns != null;
  }

  @Override
  public ChangelogMode getChangelogMode() {
    return ChangelogMode.insertOnly();
  }

  @Override
  public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
    RowDecoder decoder =
        isRaw() ? RowDecoder.raw(rawColumns) : RowDecoder.typed(rowType, keyPositions, slots);
    return SourceProvider.of(new CobbleSource(settings, decoder));
  }

  @Override
  public LookupRuntimeProvider getLookupRuntimeProvider(LookupContext context) {
    if (isRaw()) {
      throw new ValidationException(
          "Lookup joins are not supported on a raw Cobble source (source.kind = 'raw'). Read the"
              + " table as source.kind = 'sink' with its typed DDL and PRIMARY KEY to look it up.");
    }
    List<String> names = rowType.getFieldNames();
    int[][] keys = context.getKeys();
    Set<Integer> lookupColumns = new HashSet<>();
    for (int[] key : keys) {
      if (key.length != 1) {
        throw new ValidationException(
            "Lookup joins on a Cobble table support only top-level key columns; the join uses a"
                + " nested field of column '"
                + names.get(key[0])
                + "'.");
      }
      lookupColumns.add(key[0]);
    }
    Set<Integer> primaryKey = new HashSet<>();
    List<String> keyNames = new ArrayList<>();
    for (int position : keyPositions) {
      primaryKey.add(position);
      keyNames.add(names.get(position));
    }
    if (!lookupColumns.equals(primaryKey)) {
      List<String> used = new ArrayList<>();
      for (int[] key : keys) {
        used.add(names.get(key[0]));
      }
      throw new ValidationException(
          "Lookup joins on a Cobble table need equality conditions on the full PRIMARY KEY "
              + keyNames
              + ", but the join condition uses "
              + Arrays.toString(used.toArray())
              + ".");
    }
    return LookupFunctionProvider.of(
        new CobbleLookupFunction(
            settings, new RowCodec(rowType, keyPositions, slots), probeKeyEncoder(keys), buckets));
  }

  /** Encodes the primary key from the planner's key row, whose fields follow the lookup keys. */
  private KeyEncoder probeKeyEncoder(int[][] keys) {
    List<LogicalType> types = new ArrayList<>();
    int[] probePositions = new int[keyPositions.length];
    for (int k = 0; k < keyPositions.length; k++) {
      types.add(rowType.getTypeAt(keyPositions[k]));
      for (int i = 0; i < keys.length; i++) {
        if (keys[i][0] == keyPositions[k]) {
          probePositions[k] = i;
        }
      }
    }
    return new KeyEncoder(types, probePositions);
  }

  @Override
  public DynamicTableSource copy() {
    return new CobbleDynamicTableSource(
        settings, rowType, keyPositions, buckets, rawColumns, slots);
  }

  @Override
  public String asSummaryString() {
    return "Cobble " + (isRaw() ? "raw" : "sink") + " source";
  }
}
