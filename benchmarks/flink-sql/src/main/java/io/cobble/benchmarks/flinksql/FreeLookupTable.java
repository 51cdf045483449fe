package io.cobble.benchmarks.flinksql;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Collections;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.abilities.SupportsProjectionPushDown;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;
import org.apache.flink.table.types.DataType;

/**
 * The lookup shapes' pipeline limit ({@code connector = 'free-lookup'}): a table of {@link
 * JobShapes#COLUMNS} whose lookups cost nothing, answering an even key with one fixed row and an
 * odd key with none, so a join against it returns exactly the hits and misses of a written table. A
 * lookup job against it costs what the probe source, the SQL, Flink's lookup-join operator and the
 * blackhole sink cost without any table. A lookup allocates nothing: the answers are built once. It
 * takes the query's projection like a real table, so the join operator emits the same row shape.
 */
public final class FreeLookupTable implements LookupTableSource, SupportsProjectionPushDown {

  static final String IDENTIFIER = "free-lookup";

  private int[] fields = {0, 1, 2, 3};

  @Override
  public LookupRuntimeProvider getLookupRuntimeProvider(LookupContext context) {
    if (context.getKeys().length != 1 || context.getKeys()[0].length != 1) {
      throw new IllegalArgumentException("The free lookup is joined on its one key column only.");
    }
    return LookupFunctionProvider.of(new Function(fields));
  }

  @Override
  public boolean supportsNestedProjection() {
    return false;
  }

  @Override
  public void applyProjection(int[][] projectedFields, DataType producedDataType) {
    fields = new int[projectedFields.length];
    for (int i = 0; i < fields.length; i++) {
      fields[i] = projectedFields[i][0];
    }
  }

  @Override
  public DynamicTableSource copy() {
    FreeLookupTable copy = new FreeLookupTable();
    copy.fields = fields.clone();
    return copy;
  }

  @Override
  public String asSummaryString() {
    return "free lookup (pipeline limit)";
  }

  /**
   * Even keys find the fixed row, odd keys nothing; both answers are shared, never rebuilt. Public,
   * as Flink instantiates and calls lookup functions from generated code.
   */
  public static final class Function extends LookupFunction {
    private static final long serialVersionUID = 1L;

    private final int[] fields;
    private transient Collection<RowData> hit;

    Function(int[] fields) {
      this.fields = fields;
    }

    /** Builds the one row, of the projected fields of a row like the ones the sink jobs write. */
    @Override
    public void open(FunctionContext context) {
      // A string held as UTF-8 bytes, as a table's decoded rows hold theirs.
      Object[] columns = {
        0L,
        StringData.fromBytes(
            ("customer-1000000-" + JobShapes.FILLER).getBytes(StandardCharsets.UTF_8)),
        7,
        0.5
      };
      GenericRowData row = new GenericRowData(fields.length);
      for (int i = 0; i < fields.length; i++) {
        row.setField(i, columns[fields[i]]);
      }
      hit = Collections.singletonList(row);
    }

    @Override
    public Collection<RowData> lookup(RowData keyRow) {
      return (keyRow.getLong(0) & 1) != 0 ? Collections.emptyList() : hit;
    }
  }

  /** Registered as a table factory service of this module. */
  public static final class Factory implements DynamicTableSourceFactory {
    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
      return new FreeLookupTable();
    }

    @Override
    public String factoryIdentifier() {
      return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
      return Collections.emptySet();
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
      return Collections.emptySet();
    }
  }
}
