package io.cobble.flink.table;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.catalog.CatalogTable;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.DataType;

/** Builds resolved catalog tables and runs them through the factory the way the planner does. */
final class FactoryFixture {

  private final List<Column> columns = new ArrayList<>();
  private final Map<String, String> options = new HashMap<>();
  private List<String> primaryKey = Collections.emptyList();

  FactoryFixture(Path path) {
    options.put("connector", "cobble");
    options.put("path", path.toUri().toString());
  }

  FactoryFixture column(String name, DataType type) {
    columns.add(Column.physical(name, type));
    return this;
  }

  FactoryFixture primaryKey(String... names) {
    primaryKey = Arrays.asList(names);
    for (int i = 0; i < columns.size(); i++) {
      if (primaryKey.contains(columns.get(i).getName())) {
        Column c = columns.get(i);
        columns.set(i, Column.physical(c.getName(), c.getDataType().notNull()));
      }
    }
    return this;
  }

  FactoryFixture option(String key, String value) {
    options.put(key, value);
    return this;
  }

  FactoryFixture without(String key) {
    options.remove(key);
    return this;
  }

  ResolvedCatalogTable table() {
    ResolvedSchema schema =
        new ResolvedSchema(
            columns,
            Collections.emptyList(),
            primaryKey.isEmpty() ? null : UniqueConstraint.primaryKey("pk", primaryKey));
    CatalogTable table =
        CatalogTable.of(
            Schema.newBuilder().fromResolvedSchema(schema).build(),
            null,
            Collections.emptyList(),
            options);
    return new ResolvedCatalogTable(table, schema);
  }

  DynamicTableSink sink() {
    return FactoryUtil.createDynamicTableSink(
        new CobbleDynamicTableFactory(),
        ObjectIdentifier.of("c", "d", "t"),
        table(),
        new Configuration(),
        FactoryFixture.class.getClassLoader(),
        false);
  }

  DynamicTableSource source() {
    return FactoryUtil.createDynamicTableSource(
        new CobbleDynamicTableFactory(),
        ObjectIdentifier.of("c", "d", "t"),
        table(),
        new Configuration(),
        FactoryFixture.class.getClassLoader(),
        false);
  }

  void sinkFails(String... texts) {
    assertChain(assertThrows(Exception.class, this::sink), texts);
  }

  void sourceFails(String... texts) {
    assertChain(assertThrows(Exception.class, this::source), texts);
  }

  /** A lookup context whose join condition uses the given physical column positions. */
  static LookupTableSource.LookupContext lookupOn(int[]... keys) {
    return (LookupTableSource.LookupContext)
        Proxy.newProxyInstance(
            FactoryFixture.class.getClassLoader(),
            new Class<?>[] {LookupTableSource.LookupContext.class},
            (proxy, method, args) -> {
              if (method.getName().equals("getKeys")) {
                return keys;
              }
              throw new UnsupportedOperationException(method.getName());
            });
  }

  static void assertChain(Throwable e, String... texts) {
    StringBuilder chain = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      chain.append(t.getClass().getName()).append(": ").append(t.getMessage()).append('\n');
    }
    for (String text : texts) {
      assertTrue(chain.toString().contains(text), "'" + text + "' not in:\n" + chain);
    }
  }
}
