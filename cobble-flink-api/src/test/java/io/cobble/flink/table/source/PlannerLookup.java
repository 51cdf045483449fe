package io.cobble.flink.table.source;

import java.lang.reflect.Proxy;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.lookup.AsyncLookupFunctionProvider;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.functions.AsyncLookupFunction;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;

/** Asks a lookup source for its function as Flink's planner does, and opens it. */
final class PlannerLookup {
  private PlannerLookup() {}

  /**
   * The opened lookup function of {@code source} for a join on the physical {@code columns}: an
   * {@link AsyncLookupFunction} when the source provides async lookups, else a {@link
   * LookupFunction}.
   */
  static Object open(LookupTableSource source, int... columns) throws Exception {
    return open(source, new FunctionContext(null), columns);
  }

  /** As {@link #open(LookupTableSource, int...)}, opened in {@code context}. */
  static Object open(LookupTableSource source, FunctionContext context, int... columns)
      throws Exception {
    int[][] keys = new int[columns.length][];
    for (int i = 0; i < columns.length; i++) {
      keys[i] = new int[] {columns[i]};
    }
    LookupTableSource.LookupContext lookupContext =
        (LookupTableSource.LookupContext)
            Proxy.newProxyInstance(
                PlannerLookup.class.getClassLoader(),
                new Class<?>[] {LookupTableSource.LookupContext.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("getKeys")) {
                    return keys;
                  }
                  throw new UnsupportedOperationException(method.getName());
                });
    LookupTableSource.LookupRuntimeProvider provider =
        source.getLookupRuntimeProvider(lookupContext);
    if (provider instanceof AsyncLookupFunctionProvider) {
      AsyncLookupFunction function =
          ((AsyncLookupFunctionProvider) provider).createAsyncLookupFunction();
      function.open(context);
      return function;
    }
    LookupFunction function = ((LookupFunctionProvider) provider).createLookupFunction();
    function.open(context);
    return function;
  }
}
