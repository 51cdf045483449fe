package io.cobble.flink.table.source;

import java.util.Collection;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;

/**
 * Exact primary-key lookups on a sink table, one at a time on the task thread (see {@link
 * LookupReads}).
 */
public final class CobbleLookupFunction extends LookupFunction {

  private static final long serialVersionUID = 1L;

  private final LookupReads reads;
  private transient ProbeKeyBuffer keyBuffer;

  CobbleLookupFunction(LookupReads reads) {
    this.reads = reads;
  }

  @Override
  public void open(FunctionContext context) throws Exception {
    reads.open(context.getMetricGroup(), false);
    keyBuffer = new ProbeKeyBuffer();
  }

  @Override
  public Collection<RowData> lookup(RowData keyRow) {
    return reads.lookup(keyRow, keyBuffer);
  }

  @Override
  public void close() throws Exception {
    reads.close();
  }
}
