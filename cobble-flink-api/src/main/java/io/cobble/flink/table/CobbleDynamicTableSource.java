package io.cobble.flink.table;

import io.cobble.CobbleVersion;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;

/**
 * The Cobble SQL source of a validated table. Planning-time rules that depend on the query (lookup
 * keys, lookups on raw tables) are checked here; reading rows waits for table snapshots, which a
 * reader needs to see one consistent state of every shard.
 */
final class CobbleDynamicTableSource implements ScanTableSource, LookupTableSource {

  private final SourceKind kind;
  private final TableStorage table;
  private final List<String> physicalColumns;
  private final List<String> primaryKey;

  CobbleDynamicTableSource(
      SourceKind kind, TableStorage table, List<String> physicalColumns, List<String> primaryKey) {
    this.kind = kind;
    this.table = table;
    this.physicalColumns = physicalColumns;
    this.primaryKey = primaryKey;
  }

  @Override
  public ChangelogMode getChangelogMode() {
    return ChangelogMode.insertOnly();
  }

  @Override
  public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
    return new PendingScanProvider(notYet("Scanning").getMessage());
  }

  @Override
  public LookupRuntimeProvider getLookupRuntimeProvider(LookupContext context) {
    if (kind == SourceKind.RAW) {
      throw new ValidationException(
          "Lookup joins are not supported on a raw Cobble source (source.kind = 'raw'). Read the"
              + " table as source.kind = 'sink' with its typed DDL and PRIMARY KEY to look it up.");
    }
    Set<String> lookupColumns = new HashSet<>();
    for (int[] key : context.getKeys()) {
      if (key.length != 1) {
        throw new ValidationException(
            "Lookup joins on a Cobble table support only top-level key columns; the join uses a"
                + " nested field of column '"
                + physicalColumns.get(key[0])
                + "'.");
      }
      lookupColumns.add(physicalColumns.get(key[0]));
    }
    if (!lookupColumns.equals(new HashSet<>(primaryKey))) {
      throw new ValidationException(
          "Lookup joins on a Cobble table need equality conditions on the full PRIMARY KEY "
              + primaryKey
              + ", but the join condition uses "
              + Arrays.toString(lookupColumns.toArray())
              + ".");
    }
    throw notYet("Looking up");
  }

  private ValidationException notYet(String access) {
    return new ValidationException(
        access
            + " a Cobble "
            + kind.optionValue()
            + " table ('"
            + table.root()
            + "') is not available in Cobble "
            + CobbleVersion.get()
            + ": the source arrives with table snapshots.");
  }

  @Override
  public DynamicTableSource copy() {
    return new CobbleDynamicTableSource(kind, table, physicalColumns, primaryKey);
  }

  @Override
  public String asSummaryString() {
    return "Cobble " + kind.optionValue() + " source";
  }
}
