package io.cobble.it.realcluster;

import static io.cobble.it.realcluster.RealClusterIT.distJar;
import static io.cobble.it.realcluster.RealClusterIT.distribution;
import static io.cobble.it.realcluster.RealClusterIT.lineOf;
import static io.cobble.it.realcluster.RealClusterIT.minors;
import static io.cobble.it.realcluster.RealClusterIT.workDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.it.cluster.FlinkCluster;
import io.cobble.it.cluster.FlinkDistribution;
import io.cobble.it.cluster.SqlGatewayException;
import io.cobble.it.cluster.SqlSession;
import io.cobble.it.cluster.StatementResult;
import io.cobble.it.realcluster.RealClusterIT.ThrowingRunnable;
import io.cobble.testing.S3ProxyServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * The CSV recipe of {@code shared/spec/recipe-csv-object-storage.txt} on real standalone clusters,
 * one minor per Flink line: a CSV file on S3Proxy (authentication on) is read with Flink's
 * filesystem connector and csv format through Flink's S3 filesystem plugin ({@code
 * plugins/s3-fs-hadoop/}), written into a Cobble table on the same object store through {@code
 * storage.option.*}, read back, and used as a lookup dimension.
 *
 * <p>Flink's plugin and the Cobble table use two S3Proxy endpoints over the same blob store with
 * different random key pairs, so the Cobble table's secret appears in no cluster file (not even
 * {@code conf/}, which holds only Flink's own {@code s3.secret-key}) and a leak is Cobble's alone.
 *
 * <p>Classloading: flink-connector-files and flink-csv are in the cluster's {@code lib/}, so the
 * straightforward parent-first setup applies; {@link
 * #childFirstBundleOnAClusterWithoutTheFilesConnector()} reproduces the recipe's child-first bundle
 * on a cluster without flink-connector-files in {@code lib/}.
 */
class CsvObjectStorageRecipeIT {

  static final String BUCKET = "flink";
  static final String PRODUCTS_KEY = "demo-data/products.csv";
  static final String ORDERS_KEY = "demo-data/orders.csv";

  /** The recipe's file, byte for byte. */
  static final String PRODUCTS_CSV =
      "p-100,Wireless Mouse,24.99\n"
          + "p-101,Mechanical Keyboard,89.50\n"
          + "p-102,USB-C Hub,39.00\n"
          + "p-103,Laptop Stand,32.75\n";

  /** Order lines that probe the dimension: three hits and one miss (p-999). */
  static final String ORDERS_CSV = "o-1,p-101,2\no-2,p-103,1\no-3,p-999,5\no-4,p-100,3\n";

  /** The recipe's expected result table. */
  static final List<List<Object>> PRODUCTS =
      List.of(
          Arrays.asList("p-100", "Wireless Mouse", 24.99),
          Arrays.asList("p-101", "Mechanical Keyboard", 89.5),
          Arrays.asList("p-102", "USB-C Hub", 39.0),
          Arrays.asList("p-103", "Laptop Stand", 32.75));

  static final String PRODUCTS_DDL =
      "CREATE TABLE products (id STRING, name STRING, price DOUBLE) WITH ("
          + "'connector' = 'filesystem', 'path' = 's3://"
          + BUCKET
          + "/"
          + PRODUCTS_KEY
          + "', 'format' = 'csv')";

  private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);

  /** Two endpoints over the same buckets, so Flink's and Cobble's credentials can be told apart. */
  private static S3ProxyServer flinkS3;

  private static S3ProxyServer cobbleS3;

  @BeforeAll
  static void startObjectStore() throws Exception {
    Path data = workDir("s3proxy-recipe");
    deleteTree(data);
    flinkS3 = S3ProxyServer.start(data, BUCKET);
    cobbleS3 = flinkS3.startSibling();
    try (S3Client client = flinkS3.client()) {
      client.putObject(
          b -> b.bucket(BUCKET).key(PRODUCTS_KEY), RequestBody.fromString(PRODUCTS_CSV));
      client.putObject(b -> b.bucket(BUCKET).key(ORDERS_KEY), RequestBody.fromString(ORDERS_CSV));
    }
    // Authentication is on: an unsigned request for the uploaded object is refused.
    assertEquals(
        403, unsignedGetStatus(flinkS3.endpoint().resolve("/" + BUCKET + "/" + PRODUCTS_KEY)));
  }

  @AfterAll
  static void stopObjectStore() throws Exception {
    if (cobbleS3 != null) {
      cobbleS3.close();
    }
    if (flinkS3 != null) {
      flinkS3.close();
    }
  }

  /**
   * One cluster per Flink line, started once for all the tests of the line: the first minor of the
   * line that {@code cobble.it.minors} selects.
   */
  @TestInstance(TestInstance.Lifecycle.PER_CLASS)
  abstract class OnLine {

    private final List<String> lineMinors;
    private String version;
    private FlinkCluster cluster;

    OnLine(String... lineMinors) {
      this.lineMinors = Arrays.asList(lineMinors);
    }

    @BeforeAll
    void startCluster() {
      Optional<String> selected = lineMinors.stream().filter(minors()::contains).findFirst();
      Assumptions.assumeTrue(selected.isPresent(), "no minor of " + lineMinors + " selected");
      version = selected.get();
      FlinkDistribution dist = distribution(version);
      cluster =
          withObjectStore(FlinkCluster.builder(dist, workDir("recipe-flink-" + version)), dist)
              .addLibJar(distJar(lineOf(version)))
              .build();
      cluster.start();
    }

    @AfterAll
    void stopCluster() {
      if (cluster != null) {
        cluster.close();
      }
    }

    /** The recipe itself: SELECT * over the CSV file on S3 returns its four rows. */
    @Test
    void csvOnObjectStorageReadsTheFourRows() throws Exception {
      withLogsOnFailure(
          () -> {
            try (SqlSession sql =
                cluster.openSqlSession(Map.of("execution.runtime-mode", "batch"))) {
              sql.execute(PRODUCTS_DDL);
              StatementResult rows = sql.execute("SELECT * FROM products");
              assertEquals(List.of("id", "name", "price"), rows.columns());
              assertEquals(PRODUCTS, sorted(rows.rows()));
            }
          });
    }

    /**
     * The CSV rows into a Cobble table on the same object store (through {@code storage.option.*},
     * not Flink's plugin), a batch read of it, and a lookup join against it; the table's secret key
     * is in no file of the cluster or the table, and in no log entry of a Cobble logger.
     */
    @Test
    void csvIntoCobbleTableOnObjectStoreThenLookupJoin() throws Exception {
      String secret = cobbleS3.secretKey();
      String tablePath = "cobble/" + version + "/products";
      withLogsOnFailure(
          () -> {
            try (SqlSession sql =
                cluster.openSqlSession(Map.of("execution.runtime-mode", "batch"))) {
              sql.execute(PRODUCTS_DDL);
              sql.execute(
                  "CREATE TABLE dim (id STRING, name STRING, price DOUBLE,"
                      + " PRIMARY KEY (id) NOT ENFORCED) WITH ("
                      + "'connector' = 'cobble', 'path' = 's3://"
                      + BUCKET
                      + "/"
                      + tablePath
                      + "', 'bucket' = '4', 'sink.parallelism' = '1',"
                      + " 'storage.option.endpoint' = '"
                      + cobbleS3.endpoint()
                      + "', 'storage.option.access_key_id' = '"
                      + cobbleS3.accessKey()
                      + "', 'storage.option.secret_access_key' = '"
                      + secret
                      + "', 'storage.option.region' = 'us-east-1',"
                      + " 'storage.option.enable_virtual_host_style' = 'false')");
              StatementResult insert = sql.execute("INSERT INTO dim SELECT * FROM products");
              String job = insert.jobId().orElseThrow(() -> new AssertionError(insert.toString()));
              assertEquals("FINISHED", cluster.waitForJob(job, JOB_TIMEOUT));
              Path onDisk = flinkS3.directory().resolve(BUCKET).resolve(tablePath);
              assertTrue(hasFiles(onDisk), "no objects under s3://" + BUCKET + "/" + tablePath);

              assertEquals(PRODUCTS, sorted(sql.execute("SELECT * FROM dim").rows()));

              sql.execute("SET 'execution.runtime-mode' = 'streaming'");
              sql.execute(
                  "CREATE TABLE orders (order_id STRING, product_id STRING, qty INT,"
                      + " pt AS PROCTIME()) WITH ('connector' = 'filesystem', 'path' = 's3://"
                      + BUCKET
                      + "/"
                      + ORDERS_KEY
                      + "', 'format' = 'csv')");
              StatementResult joined =
                  sql.execute(
                      "SELECT o.order_id, o.product_id, o.qty, d.name, d.price FROM orders AS o"
                          + " LEFT JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d"
                          + " ON o.product_id = d.id");
              assertEquals(
                  List.of(
                      Arrays.asList("o-1", "p-101", 2, "Mechanical Keyboard", 89.5),
                      Arrays.asList("o-2", "p-103", 1, "Laptop Stand", 32.75),
                      Arrays.asList("o-3", "p-999", 5, null, null),
                      Arrays.asList("o-4", "p-100", 3, "Wireless Mouse", 24.99)),
                  sorted(joined.rows()));
            }
            assertSecretNotLeaked(secret);
          },
          secret);
    }

    /**
     * Tables on object storage with credentials only in the cluster configuration (Flink's own
     * {@code s3.*} keys, which the plugin reads): one on {@code s3a://}, served by Flink's {@code
     * flink-s3-fs-hadoop} plugin through Cobble's provider over Flink's file systems, and one on
     * {@code s3://}, served by Cobble's built-in provider with the cluster's keys as defaults. Each
     * is written, read back row by row and looked up; the objects land in the store; the cluster's
     * secret key is in none of the table's objects, no file Cobble wrote and no Cobble log entry.
     */
    @Test
    void tablesOnS3aAndS3WithCredentialsOnlyInTheClusterConfiguration() throws Exception {
      String secret = flinkS3.secretKey();
      withLogsOnFailure(
          () -> {
            for (String scheme : List.of("s3a", "s3")) {
              String tablePath = "cobble/" + version + "/cluster-credentials-" + scheme;
              try (SqlSession sql =
                  cluster.openSqlSession(Map.of("execution.runtime-mode", "batch"))) {
                sql.execute(PRODUCTS_DDL);
                sql.execute(
                    "CREATE TABLE dim (id STRING, name STRING, price DOUBLE,"
                        + " PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'cobble', 'path' = '"
                        + scheme
                        + "://"
                        + BUCKET
                        + "/"
                        + tablePath
                        + "', 'bucket' = '4', 'sink.parallelism' = '2')");
                StatementResult insert = sql.execute("INSERT INTO dim SELECT * FROM products");
                String job =
                    insert.jobId().orElseThrow(() -> new AssertionError(insert.toString()));
                assertEquals("FINISHED", cluster.waitForJob(job, JOB_TIMEOUT), scheme);
                Path onDisk = flinkS3.directory().resolve(BUCKET).resolve(tablePath);
                assertTrue(hasFiles(onDisk.resolve("global")), "no commit on " + scheme);
                assertEquals(PRODUCTS, sorted(sql.execute("SELECT * FROM dim").rows()), scheme);

                sql.execute("SET 'execution.runtime-mode' = 'streaming'");
                StatementResult joined =
                    sql.execute(
                        "SELECT p.id, d.name FROM (SELECT id, PROCTIME() AS pt FROM (VALUES"
                            + " ('p-102'), ('p-999')) AS t(id)) AS p LEFT JOIN dim"
                            + " FOR SYSTEM_TIME AS OF p.pt AS d ON p.id = d.id");
                assertEquals(
                    List.of(Arrays.asList("p-102", "USB-C Hub"), Arrays.asList("p-999", null)),
                    sorted(joined.rows()),
                    scheme);
              }
            }
            assertClusterSecretNotInCobbleOutput(secret);
          },
          secret);
    }

    /**
     * The cluster's own secret is in {@code conf/} by design; it must be in no object of the store,
     * no other file the cluster wrote apart from Flink's blob stores, and no entry of a Cobble
     * logger.
     */
    private void assertClusterSecretNotInCobbleOutput(String secret) throws IOException {
      List<Path> files = new ArrayList<>(SecretScan.filesContaining(flinkS3.directory(), secret));
      try (Stream<Path> dirs = Files.list(cluster.home())) {
        for (Path dir : dirs.collect(Collectors.toList())) {
          if (!List.of("conf", "log", "lib", "opt", "plugins")
              .contains(dir.getFileName().toString())) {
            files.addAll(SecretScan.filesContaining(dir, secret));
          }
        }
      }
      files.removeIf(CsvObjectStorageRecipeIT::inBlobStore);
      assertEquals(List.of(), files, "files holding the cluster's secret key");
      List<SecretScan.Hit> cobble =
          SecretScan.logEntriesContaining(cluster.logDir(), secret).stream()
              .filter(h -> h.fromLoggerUnder("io.cobble"))
              .collect(Collectors.toList());
      assertEquals(List.of(), cobble, "Cobble log entries holding the cluster's secret key");
    }

    /**
     * Fails on the secret in a file the cluster wrote ({@code conf/} included: Flink's plugin has
     * its own key pair; {@code log/} apart) or in an object of the store, and in a log entry of a
     * Cobble logger ({@code io.cobble}). Reports without failing what only Flink itself wrote:
     * entries of other loggers (Flink logging table options) and its blob stores (serialized job
     * data, which holds the table options the job was planned with).
     */
    private void assertSecretNotLeaked(String secret) throws IOException {
      List<Path> files = new ArrayList<>();
      try (Stream<Path> dirs = Files.list(cluster.home())) {
        for (Path dir : dirs.collect(Collectors.toList())) {
          String name = dir.getFileName().toString();
          // lib/, opt/ and plugins/ only link the Maven artifacts the cluster was built from.
          if (!List.of("log", "lib", "opt", "plugins").contains(name)) {
            files.addAll(SecretScan.filesContaining(dir, secret));
          }
        }
      }
      List<Path> flinkBlobs =
          files.stream().filter(CsvObjectStorageRecipeIT::inBlobStore).collect(Collectors.toList());
      files.removeAll(flinkBlobs);
      files.addAll(SecretScan.filesContaining(flinkS3.directory(), secret));
      assertEquals(List.of(), files, "files holding the Cobble table's secret key");
      List<SecretScan.Hit> entries = SecretScan.logEntriesContaining(cluster.logDir(), secret);
      List<SecretScan.Hit> cobble =
          entries.stream().filter(h -> h.fromLoggerUnder("io.cobble")).collect(Collectors.toList());
      assertEquals(List.of(), cobble, "Cobble log entries holding the table's secret key");
      if (!entries.isEmpty() || !flinkBlobs.isEmpty()) {
        System.out.println(
            "NOTE Flink "
                + version
                + ": the Cobble table's secret key is in Flink's own log entries "
                + entries
                + " and blob store files "
                + flinkBlobs);
      }
    }

    private void withLogsOnFailure(ThrowingRunnable body, String... secrets) throws Exception {
      try {
        body.run();
      } catch (Exception | AssertionError e) {
        System.err.println(redact(cluster.logTails(80), secrets));
        String text = stackTraceText(e);
        if (!redact(text, secrets).equals(text)) {
          throw new AssertionError(
              "an error text holds the Cobble table's secret key (redacted here):\n"
                  + redact(text, secrets));
        }
        throw e;
      }
    }
  }

  /**
   * The recipe's classloading on a standalone 1.19.3 cluster shaped like the recipe's image: {@code
   * lib/} has flink-csv but not flink-connector-files, and {@code org.apache.flink.} is removed
   * from Flink's stock parent-first patterns. Without a connector the table has no factory; with
   * flink-connector-files as a separate user artifact the csv factory of {@code lib/} fails with
   * the recipe's {@code NoClassDefFoundError} of {@code BulkReaderFormatFactory}; one bundle of
   * both jars with merged service files, added as a user artifact and loaded child-first, reads the
   * CSV file from S3.
   */
  @Test
  void childFirstBundleOnAClusterWithoutTheFilesConnector() throws Exception {
    String version = "1.19.3";
    Assumptions.assumeTrue(minors().contains(version), version + " not selected");
    FlinkDistribution dist = distribution(version);
    Path filesJar = libJar(dist, "flink-connector-files-");
    Path bundle =
        ServicesMergingBundle.write(
            workDir("recipe-bundle").resolve("filesystem-csv-bundle.jar"),
            List.of(filesJar, libJar(dist, "flink-csv-")));
    try (java.util.jar.JarFile jar = new java.util.jar.JarFile(bundle.toFile())) {
      String factories = "META-INF/services/org.apache.flink.table.factories.Factory";
      assertTrue(
          ServicesMergingBundle.lines(jar, jar.getJarEntry(factories))
              .containsAll(
                  List.of(
                      "org.apache.flink.connector.file.table.FileSystemTableFactory",
                      "org.apache.flink.formats.csv.CsvFileFormatFactory",
                      "org.apache.flink.formats.csv.CsvFormatFactory")),
          "merged " + factories);
    }
    List<String> stock = dist.defaultParentFirstPatterns();
    assertTrue(stock.contains("org.apache.flink."), "stock patterns: " + stock);
    String childFirst =
        stock.stream().filter(p -> !p.equals("org.apache.flink.")).collect(Collectors.joining(";"));
    try (FlinkCluster cluster =
        withObjectStore(
                FlinkCluster.builder(dist, workDir("recipe-flink-" + version + "-child-first")),
                dist)
            .withoutLibJars("flink-connector-files-")
            .config("classloader.resolve-order", "child-first")
            .config("classloader.parent-first-patterns.default", childFirst)
            .build()) {
      cluster.start();
      try {
        try (SqlSession sql = cluster.openSqlSession(Map.of("execution.runtime-mode", "batch"))) {
          sql.execute(PRODUCTS_DDL);
          SqlGatewayException noConnector =
              assertThrows(SqlGatewayException.class, () -> sql.execute("SELECT * FROM products"));
          assertTrue(
              noConnector.getMessage().contains("'filesystem'"),
              "without the bundle:\n" + noConnector.getMessage());
        }
        try (SqlSession sql = cluster.openSqlSession(Map.of("execution.runtime-mode", "batch"))) {
          sql.execute("ADD JAR '" + filesJar + "'");
          sql.execute(PRODUCTS_DDL);
          SqlGatewayException separate =
              assertThrows(SqlGatewayException.class, () -> sql.execute("SELECT * FROM products"));
          assertTrue(
              separate
                  .getMessage()
                  .contains(
                      "NoClassDefFoundError: org/apache/flink/connector/file/table/factories/"
                          + "BulkReaderFormatFactory"),
              "separate jars:\n" + separate.getMessage());
        }
        try (SqlSession sql = cluster.openSqlSession(Map.of("execution.runtime-mode", "batch"))) {
          sql.execute("ADD JAR '" + bundle + "'");
          sql.execute(PRODUCTS_DDL);
          assertEquals(PRODUCTS, sorted(sql.execute("SELECT * FROM products").rows()));
        }
      } catch (Exception | AssertionError e) {
        System.err.println(cluster.logTails(80));
        throw e;
      }
    }
  }

  @Nested
  class Flink117Line extends OnLine {
    Flink117Line() {
      super("1.17.2", "1.18.1");
    }
  }

  @Nested
  class Flink119Line extends OnLine {
    Flink119Line() {
      super("1.19.3", "1.20.3");
    }
  }

  @Nested
  class Flink20Line extends OnLine {
    Flink20Line() {
      super("2.0.0", "2.1.1", "2.2.0", "2.3.0");
    }
  }

  // ---------------------------------------------------------------- helpers

  /** Flink's S3 plugin in {@code plugins/s3-fs-hadoop/}, configured for the Flink endpoint. */
  static FlinkCluster.Builder withObjectStore(
      FlinkCluster.Builder builder, FlinkDistribution dist) {
    return builder
        .addPlugin("s3-fs-hadoop", dist.pluginJars("s3-fs-hadoop").get(0))
        .config("s3.endpoint", flinkS3.endpoint().toString())
        .config("s3.path.style.access", "true")
        .config("s3.access-key", flinkS3.accessKey())
        .config("s3.secret-key", flinkS3.secretKey());
  }

  static Path libJar(FlinkDistribution dist, String prefix) {
    return dist.libJars().stream()
        .filter(p -> p.getFileName().toString().startsWith(prefix))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + prefix + "*.jar in " + dist.libDir()));
  }

  /** Rows ordered by their first column, so that parallel reads compare with a fixed list. */
  static List<List<Object>> sorted(List<List<Object>> rows) {
    return rows.stream()
        .sorted(Comparator.comparing(r -> String.valueOf(r.get(0))))
        .collect(Collectors.toList());
  }

  static int unsignedGetStatus(URI uri) throws IOException {
    HttpURLConnection connection = (HttpURLConnection) uri.toURL().openConnection();
    try {
      return connection.getResponseCode();
    } finally {
      connection.disconnect();
    }
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
        Files.delete(p);
      }
    }
  }

  static String redact(String text, String... secrets) {
    String out = text;
    for (String secret : secrets) {
      out = out.replace(secret, "******");
    }
    return out;
  }

  /** Messages and stack traces of {@code e} and its causes. */
  static String stackTraceText(Throwable e) {
    StringWriter text = new StringWriter();
    e.printStackTrace(new PrintWriter(text));
    return text.toString();
  }

  /** Whether {@code file} lies in a Flink blob server or blob cache directory. */
  static boolean inBlobStore(Path file) {
    for (Path part : file) {
      if (part.toString().startsWith("blobStore-")) {
        return true;
      }
    }
    return false;
  }

  static boolean hasFiles(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return false;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.anyMatch(Files::isRegularFile);
    }
  }
}
