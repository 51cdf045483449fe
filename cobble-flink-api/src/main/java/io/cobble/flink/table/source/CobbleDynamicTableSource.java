package io.cobble.flink.table.source;

import io.cobble.flink.table.codec.ColumnSlots;
import io.cobble.flink.table.codec.RowProjection;
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
import org.apache.flink.table.connector.source.abilities.SupportsProjectionPushDown;
import org.apache.flink.table.connector.source.lookup.AsyncLookupFunctionProvider;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;

/**
 * The Cobble SQL source of a validated table: a {@link CobbleSource} scan, and for sink tables
 * exact primary-key lookups, sync or async ({@code lookup.async}). The planner pushes the query's
 * columns down ({@link #applyProjection}): scans and lookups then read and decode only the Cobble
 * columns of those columns. Rules that depend on the query (the lookup key) are checked here.
 */
public final class CobbleDynamicTableSource
    implements ScanTableSource, LookupTableSource, SupportsProjectionPushDown {

  private final SourceSettings settings;
  private final RowType rowType;
  private final int[] keyPositions;
  private final int buckets;
  private final int[] rawColumns;
  private final ColumnSlots slots;
  private final LookupSettings lookup;
  // The DDL positions of the fields the query reads, in produced order.
  private int[] fields;

  private CobbleDynamicTableSource(
      SourceSettings settings,
      RowType rowType,
      int[] keyPositions,
      int buckets,
      int[] rawColumns,
      ColumnSlots slots,
      LookupSettings lookup,
      int[] fields) {
    this.settings = settings;
    this.rowType = rowType;
    this.keyPositions = keyPositions;
    this.buckets = buckets;
    this.rawColumns = rawColumns;
    this.slots = slots;
    this.lookup = lookup;
    this.fields = fields;
  }

  /**
   * A sink table's typed source; {@code keyPositions} are the primary key's physical positions in
   * the table's key order, {@code slots} the Cobble columns of the DDL's value columns.
   */
  public static CobbleDynamicTableSource sinkTable(
      SourceSettings settings,
      RowType rowType,
      int[] keyPositions,
      int buckets,
      ColumnSlots slots,
      LookupSettings lookup) {
    return new CobbleDynamicTableSource(
        settings, rowType, keyPositions.clone(), buckets, null, slots, lookup, allFields(rowType));
  }

  /** A raw source of the Cobble columns {@code rawColumns}. */
  public static CobbleDynamicTableSource raw(
      SourceSettings settings, RowType rowType, int[] rawColumns) {
    return new CobbleDynamicTableSource(
        settings, rowType, new int[0], 0, rawColumns.clone(), null, null, allFields(rowType));
  }

  private static int[] allFields(RowType rowType) {
    int[] all = new int[rowType.getFieldCount()];
    Arrays.setAll(all, i -> i);
    return all;
  }

  private boolean isRaw() {
    return rawColumns != null;
  }

  @Override
  public boolean supportsNestedProjection() {
    return false;
  }

  @Override
  public void applyProjection(int[][] projectedFields, DataType producedDataType) {
    int[] projected = new int[projectedFields.length];
    for (int i = 0; i < projectedFields.length; i++) {
      projected[i] = fields[projectedFields[i][0]];
    }
    fields = projected;
  }

  @Override
  public ChangelogMode getChangelogMode() {
    return ChangelogMode.insertOnly();
  }

  @Override
  public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
    RowDecoder decoder =
        isRaw() ? RowDecoder.raw(rawColumns, fields) : RowDecoder.typed(projection());
    return SourceProvider.of(new CobbleSource(settings, decoder));
  }

  private RowProjection projection() {
    return RowProjection.of(rowType, keyPositions, slots, fields);
  }

  @Override
  public LookupRuntimeProvider getLookupRuntimeProvider(LookupContext context) {
    if (isRaw()) {
      throw new ValidationException(
          "Lookup joins are not supported on a raw Cobble source (source.kind = 'raw'). Read the"
              + " table as source.kind = 'sink' with its typed DDL and PRIMARY KEY to look it up.");
    }
    RowProjection projection = projection();
    List<String> names = projection.producedType().getFieldNames();
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
    for (int position : projection.keyFieldPositions()) {
      primaryKey.add(position);
    }
    if (!lookupColumns.equals(primaryKey)) {
      List<String> keyNames = new ArrayList<>();
      for (int position : keyPositions) {
        keyNames.add(rowType.getFieldNames().get(position));
      }
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
    LookupReads reads =
        new LookupReads(settings, projection, probePositions(projection, keys), buckets);
    return lookup.async()
        ? AsyncLookupFunctionProvider.of(new CobbleAsyncLookupFunction(reads, lookup.maxInFlight()))
        : LookupFunctionProvider.of(new CobbleLookupFunction(reads));
  }

  /** Each primary-key part's position in the planner's key row, whose fields follow the keys. */
  private static int[] probePositions(RowProjection projection, int[][] keys) {
    int[] keyFields = projection.keyFieldPositions();
    int[] probePositions = new int[keyFields.length];
    for (int k = 0; k < keyFields.length; k++) {
      for (int i = 0; i < keys.length; i++) {
        if (keys[i][0] == keyFields[k]) {
          probePositions[k] = i;
        }
      }
    }
    return probePositions;
  }

  @Override
  public DynamicTableSource copy() {
    return new CobbleDynamicTableSource(
        settings, rowType, keyPositions, buckets, rawColumns, slots, lookup, fields.clone());
  }

  @Override
  public String asSummaryString() {
    return "Cobble " + (isRaw() ? "raw" : "sink") + " source";
  }
}
