package io.cobble.flink.catalog;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/** SQL sessions on a Cobble catalog, and assertions on what they return or reject. */
final class CatalogSql {

  private CatalogSql() {}

  static TableEnvironment batch() {
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.getConfig().getConfiguration().setString("parallelism.default", "2");
    return env;
  }

  static TableEnvironment streaming() {
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    env.getConfig().getConfiguration().setString("parallelism.default", "1");
    return env;
  }

  /** {@code CREATE CATALOG name WITH ('type' = 'cobble', ...)} plus {@code extra} options. */
  static String createCatalog(String name, String path, int buckets, Map<String, String> extra) {
    StringBuilder ddl =
        new StringBuilder("CREATE CATALOG ")
            .append(name)
            .append(" WITH ('type' = 'cobble', 'path' = '")
            .append(path)
            .append("', 'buckets' = '")
            .append(buckets)
            .append("'");
    extra.forEach((k, v) -> ddl.append(", '").append(k).append("' = '").append(v).append("'"));
    return ddl.append(")").toString();
  }

  /** A session in the catalog: created, used, in database {@code analytics} (created if needed). */
  static TableEnvironment session(
      TableEnvironment env, String catalog, String path, int buckets, Map<String, String> extra) {
    env.executeSql(createCatalog(catalog, path, buckets, extra));
    env.executeSql("USE CATALOG " + catalog);
    env.executeSql("CREATE DATABASE IF NOT EXISTS analytics");
    env.executeSql("USE analytics");
    return env;
  }

  static List<Row> collect(TableEnvironment env, String query) throws Exception {
    List<Row> rows = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql(query).collect()) {
      it.forEachRemaining(rows::add);
    }
    return rows;
  }

  /** Rows by their first field, rendered as strings for compact comparisons. */
  static TreeMap<Object, String> byFirst(List<Row> rows) {
    TreeMap<Object, String> map = new TreeMap<>();
    for (Row row : rows) {
      if (map.put(row.getField(0), row.toString()) != null) {
        fail("row twice: " + row);
      }
    }
    return map;
  }

  static void await(TableEnvironment env, String statement) throws Exception {
    env.executeSql(statement).await();
  }

  /** The statement fails, and some exception in the cause chain contains {@code message}. */
  static void assertRejected(TableEnvironment env, String statement, String message) {
    Throwable thrown = assertThrows(Throwable.class, () -> env.executeSql(statement).await());
    assertChain(thrown, message);
  }

  static void assertChain(Throwable thrown, String message) {
    StringBuilder seen = new StringBuilder();
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      if (t.getMessage() != null && t.getMessage().contains(message)) {
        return;
      }
      seen.append("\n  ").append(t);
    }
    fail("no exception in the chain says '" + message + "':" + seen);
  }
}
