package io.cobble.it.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A standalone Flink session cluster on 127.0.0.1: a JobManager ({@code
 * StandaloneSessionClusterEntrypoint}), a TaskManager ({@code TaskManagerRunner}) and, where the
 * minor has one, a SQL Gateway, each in its own JVM started from a {@link FlinkDistribution} plus
 * extra {@code lib/} jars (a Cobble dist jar, usually).
 *
 * <pre>{@code
 * try (FlinkCluster cluster = FlinkCluster.builder(dist, workDir).addLibJar(cobbleJar).build()) {
 *   cluster.start();
 *   try (SqlSession sql = cluster.openSqlSession()) {
 *     StatementResult r = sql.execute("INSERT INTO ...");
 *     cluster.waitForJob(r.jobId().get(), Duration.ofMinutes(2));
 *   }
 *   cluster.killTaskManager();   // SIGKILL
 *   cluster.startTaskManager();  // a new TaskManager JVM, waits for its slots
 * }
 * }</pre>
 *
 * Every process is stopped by its own PID in {@link #close()} (SIGTERM, then SIGKILL after a
 * bounded wait). Logs stay under {@code <workDir>/log}; {@link #logTails(int)} gives their ends.
 */
public final class FlinkCluster implements AutoCloseable {

  /** Flink's JDK 17 module flags ({@code env.java.opts.all} of the 1.19/1.20 config.yaml). */
  public static final List<String> JDK17_MODULE_FLAGS =
      Arrays.asList(
          "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
          "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED",
          "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
          "--add-opens=java.base/java.lang=ALL-UNNAMED",
          "--add-opens=java.base/java.net=ALL-UNNAMED",
          "--add-opens=java.base/java.io=ALL-UNNAMED",
          "--add-opens=java.base/java.nio=ALL-UNNAMED",
          "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
          "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
          "--add-opens=java.base/java.text=ALL-UNNAMED",
          "--add-opens=java.base/java.time=ALL-UNNAMED",
          "--add-opens=java.base/java.util=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

  static final String LOOPBACK = "127.0.0.1";
  private static final String EXEC_RESULT_PREFIX = "BASH_JAVA_UTILS_EXEC_RESULT:";
  private static final Duration STOP_GRACE = Duration.ofSeconds(20);

  private final FlinkDistribution distribution;
  private final Path home;
  private final List<Path> extraLibJars;
  private final Predicate<Path> keepDistLibJar;
  private final Map<String, List<Path>> plugins;
  private final Map<String, String> extraConfig;
  private final boolean sqlGateway;
  private final Duration startTimeout;
  private final String javaBin;
  private final RestJson rest = new RestJson();

  private final List<ManagedProcess> processes = new ArrayList<>();
  private ManagedProcess jobManager;
  private ManagedProcess taskManager;
  private ManagedProcess gateway;
  private int taskManagerStarts;
  private int restPort;
  private int gatewayPort;
  private List<String> tmJvmParams;
  private List<String> tmDynamicArgs;
  private final Thread shutdownHook = new Thread(this::killAllNow, "flink-cluster-harness-cleanup");
  private boolean hookRegistered;

  private FlinkCluster(Builder builder) {
    this.distribution = builder.distribution;
    this.home = builder.workDir.toAbsolutePath().normalize();
    this.extraLibJars = new ArrayList<>(builder.libJars);
    this.keepDistLibJar = builder.keepDistLibJar;
    this.plugins = new LinkedHashMap<>(builder.plugins);
    this.extraConfig = new LinkedHashMap<>(builder.config);
    this.sqlGateway = builder.sqlGateway;
    this.startTimeout = builder.startTimeout;
    this.javaBin = Paths.get(builder.javaHome, "bin", "java").toString();
  }

  public static Builder builder(FlinkDistribution distribution, Path workDir) {
    return new Builder(distribution, workDir);
  }

  /** Configures a cluster before {@link FlinkCluster#start()}. */
  public static final class Builder {
    private final FlinkDistribution distribution;
    private final Path workDir;
    private final List<Path> libJars = new ArrayList<>();
    private Predicate<Path> keepDistLibJar = jar -> true;
    private final Map<String, List<Path>> plugins = new LinkedHashMap<>();
    private final Map<String, String> config = new LinkedHashMap<>();
    private boolean sqlGateway = true;
    private Duration startTimeout = Duration.ofSeconds(120);
    private String javaHome = System.getProperty("java.home");

    private Builder(FlinkDistribution distribution, Path workDir) {
      this.distribution = Objects.requireNonNull(distribution);
      this.workDir = Objects.requireNonNull(workDir);
      config.put("jobmanager.memory.process.size", "1024m");
      config.put("taskmanager.memory.process.size", "1536m");
      config.put("taskmanager.numberOfTaskSlots", "2");
      config.put("parallelism.default", "1");
    }

    /** A jar that goes into the cluster's {@code lib/} (parent-first, like a real install). */
    public Builder addLibJar(Path jar) {
      if (!Files.isRegularFile(jar)) {
        throw new IllegalArgumentException("no such jar: " + jar);
      }
      libJars.add(jar.toAbsolutePath().normalize());
      return this;
    }

    /**
     * Leaves the distribution's {@code lib/} jars whose file name starts with {@code prefix} out of
     * this cluster, e.g. to model an image that lacks a connector the distribution has.
     */
    public Builder withoutLibJars(String prefix) {
      keepDistLibJar = keepDistLibJar.and(jar -> !jar.getFileName().toString().startsWith(prefix));
      return this;
    }

    /**
     * A jar for {@code plugins/<name>/}, where Flink loads it in its own plugin class loader (file
     * systems, metric reporters), e.g. {@code addPlugin("s3-fs-hadoop",
     * dist.pluginJars("s3-fs-hadoop").get(0))}.
     */
    public Builder addPlugin(String name, Path jar) {
      if (name.isEmpty() || name.contains("/") || name.contains("..")) {
        throw new IllegalArgumentException("plugin name must be one directory name: " + name);
      }
      if (!Files.isRegularFile(jar)) {
        throw new IllegalArgumentException("no such jar: " + jar);
      }
      plugins.computeIfAbsent(name, n -> new ArrayList<>()).add(jar.toAbsolutePath().normalize());
      return this;
    }

    /** A configuration entry; overrides the harness defaults (not the 127.0.0.1 bindings). */
    public Builder config(String key, String value) {
      config.put(key, value);
      return this;
    }

    /** Whether to start the SQL Gateway too (default: yes, when the minor has one). */
    public Builder sqlGateway(boolean start) {
      this.sqlGateway = start;
      return this;
    }

    /** Bound on each startup wait (JobManager REST, TaskManager slots, gateway). */
    public Builder startTimeout(Duration timeout) {
      this.startTimeout = timeout;
      return this;
    }

    public Builder javaHome(String javaHome) {
      this.javaHome = javaHome;
      return this;
    }

    public FlinkCluster build() {
      return new FlinkCluster(this);
    }
  }

  // ---------------------------------------------------------------- lifecycle

  /** Writes {@code conf/}, links {@code lib/}, starts JobManager, TaskManager and SQL Gateway. */
  public FlinkCluster start() {
    if (jobManager != null) {
      throw new IllegalStateException("already started");
    }
    // If the test JVM ends without close() (a fork timeout, Ctrl-C), still end the cluster's JVMs.
    Runtime.getRuntime().addShutdownHook(shutdownHook);
    hookRegistered = true;
    try {
      prepareHome();
      int[] ports = freePorts(3);
      restPort = ports[0];
      int rpcPort = ports[1];
      gatewayPort = ports[2];
      writeConfig(rpcPort);
      writeLog4j();

      ResourceParams jm = resourceParams("GET_JM_RESOURCE_PARAMS");
      ResourceParams tm = resourceParams("GET_TM_RESOURCE_PARAMS");
      tmJvmParams = tm.jvmParams;
      tmDynamicArgs = tm.dynamicArgs;

      List<String> jmArgs = new ArrayList<>();
      jmArgs.add("--configDir");
      jmArgs.add(confDir().toString());
      jmArgs.add("--executionMode");
      jmArgs.add("cluster");
      jmArgs.addAll(jm.dynamicArgs);
      jobManager =
          launch(
              "jobmanager",
              jm.jvmParams,
              "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint",
              jmArgs,
              false);
      waitUntil(
          "JobManager REST at " + restUrl(), startTimeout, () -> restOk("/overview"), jobManager);

      startTaskManager();

      if (sqlGateway && distribution.hasSqlGateway()) {
        List<String> gwArgs = new ArrayList<>();
        gwArgs.add("-Dsql-gateway.endpoint.rest.address=" + LOOPBACK);
        gwArgs.add("-Dsql-gateway.endpoint.rest.bind-address=" + LOOPBACK);
        gwArgs.add("-Dsql-gateway.endpoint.rest.port=" + gatewayPort);
        gateway =
            launch(
                "sql-gateway",
                Arrays.asList("-Xms256m", "-Xmx512m"),
                "org.apache.flink.table.gateway.SqlGateway",
                gwArgs,
                true);
        waitUntil(
            "SQL Gateway at " + gatewayUrl(),
            startTimeout,
            () -> {
              try {
                return rest.get(gatewayUrl() + "/v1/info").ok();
              } catch (IOException e) {
                return false;
              }
            },
            gateway);
      }
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(failureText("cluster start failed"), e);
    } catch (RuntimeException | Error e) {
      System.err.println(failureText("cluster start failed: " + e));
      throw e;
    }
  }

  /** Starts a (new) TaskManager JVM and waits until the JobManager sees its slots. */
  public ManagedProcess startTaskManager() {
    if (taskManager != null && taskManager.isAlive()) {
      throw new IllegalStateException("a TaskManager is running: " + taskManager);
    }
    java.util.Set<String> before = taskManagerIds();
    taskManagerStarts++;
    List<String> args = new ArrayList<>();
    args.add("--configDir");
    args.add(confDir().toString());
    args.addAll(tmDynamicArgs);
    String name = taskManagerStarts == 1 ? "taskmanager" : "taskmanager-" + taskManagerStarts;
    taskManager =
        launch(
            name,
            tmJvmParams,
            "org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
            args,
            false);
    ManagedProcess started = taskManager;
    waitUntil(
        "TaskManager " + name + " registered with slots",
        startTimeout,
        () -> {
          java.util.Set<String> now = taskManagerIds();
          now.removeAll(before);
          return !now.isEmpty() && slotsTotal() > 0;
        },
        started);
    return started;
  }

  /** SIGKILLs the TaskManager JVM (no shutdown hooks run) and waits for it to be gone. */
  public void killTaskManager() {
    if (taskManager == null) {
      throw new IllegalStateException("no TaskManager");
    }
    taskManager.kill(Duration.ofSeconds(30));
  }

  /** Stops the TaskManager gracefully (SIGTERM, SIGKILL after a bounded wait). */
  public void stopTaskManager() {
    if (taskManager == null) {
      throw new IllegalStateException("no TaskManager");
    }
    taskManager.stop(STOP_GRACE);
  }

  /** Waits until {@code /overview} shows at least {@code slots} slots in total. */
  public void waitForSlots(int slots, Duration timeout) {
    waitUntil("slots-total >= " + slots, timeout, () -> slotsTotal() >= slots, jobManager);
  }

  /**
   * Waits until the JobManager lists exactly {@code count} TaskManagers with slots (after a kill,
   * the dead one stays listed until {@code heartbeat.timeout}).
   */
  public void waitForTaskManagerCount(int count, Duration timeout) {
    waitUntil(
        count + " TaskManager(s) registered",
        timeout,
        () -> taskManagerIds().size() == count,
        jobManager);
  }

  @Override
  public void close() {
    List<ManagedProcess> reversed = new ArrayList<>(processes);
    java.util.Collections.reverse(reversed);
    for (ManagedProcess process : reversed) {
      process.stop(STOP_GRACE);
    }
    if (hookRegistered) {
      try {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs anyway
      }
      hookRegistered = false;
    }
  }

  private void killAllNow() {
    for (ManagedProcess process : new ArrayList<>(processes)) {
      process.kill(Duration.ofSeconds(5));
    }
  }

  // ---------------------------------------------------------------- access

  public FlinkDistribution distribution() {
    return distribution;
  }

  /** The cluster's {@code $FLINK_HOME}-like directory (conf/, lib/, log/, tmp/). */
  public Path home() {
    return home;
  }

  public Path confDir() {
    return home.resolve("conf");
  }

  public Path libDir() {
    return home.resolve("lib");
  }

  public Path logDir() {
    return home.resolve("log");
  }

  public Path pluginsDir() {
    return home.resolve("plugins");
  }

  public String restUrl() {
    return "http://" + LOOPBACK + ":" + restPort;
  }

  public String gatewayUrl() {
    if (gateway == null) {
      throw new IllegalStateException("no SQL Gateway in this cluster");
    }
    return "http://" + LOOPBACK + ":" + gatewayPort;
  }

  public boolean hasSqlGateway() {
    return gateway != null;
  }

  public ManagedProcess jobManager() {
    return jobManager;
  }

  public ManagedProcess taskManager() {
    return taskManager;
  }

  public ManagedProcess sqlGatewayProcess() {
    return gateway;
  }

  /** Opens a SQL Gateway session with the given session properties. */
  public SqlSession openSqlSession(Map<String, String> properties) {
    return SqlSession.open(rest, gatewayUrl(), properties);
  }

  public SqlSession openSqlSession() {
    return openSqlSession(Map.of());
  }

  /** GET on the JobManager REST API; the parsed JSON body (throws on a non-2xx status). */
  public JsonNode restGet(String path) {
    try {
      RestJson.Response response = rest.get(restUrl() + path);
      if (!response.ok()) {
        throw new IllegalStateException(
            "GET " + path + " -> " + response.status + ": " + response.text);
      }
      return response.body;
    } catch (IOException e) {
      throw new UncheckedIOException("GET " + restUrl() + path, e);
    }
  }

  /** The job's state as the JobManager reports it ({@code RUNNING}, {@code FINISHED}, ...). */
  public String jobState(String jobId) {
    return restGet("/jobs/" + jobId).path("state").asText();
  }

  /**
   * Waits until the job reaches a globally terminal state and returns it; on {@code FAILED} the
   * exception is thrown with the root exception text.
   */
  public String waitForJob(String jobId, Duration timeout) {
    String[] state = {null};
    waitUntil(
        "job " + jobId + " to end",
        timeout,
        () -> {
          state[0] = jobState(jobId);
          return Arrays.asList("FINISHED", "FAILED", "CANCELED").contains(state[0]);
        },
        jobManager);
    if ("FAILED".equals(state[0])) {
      JsonNode exceptions = restGet("/jobs/" + jobId + "/exceptions");
      throw new IllegalStateException(
          "job "
              + jobId
              + " FAILED: "
              + exceptions.path("root-exception").asText(exceptions.toString()));
    }
    return state[0];
  }

  public int slotsTotal() {
    try {
      RestJson.Response response = rest.get(restUrl() + "/overview");
      return response.ok() ? response.body.path("slots-total").asInt(0) : 0;
    } catch (IOException e) {
      return 0;
    }
  }

  /** Ids of the TaskManagers the JobManager currently lists (a killed one stays until timeout). */
  public java.util.Set<String> taskManagerIds() {
    java.util.Set<String> ids = new java.util.HashSet<>();
    try {
      RestJson.Response response = rest.get(restUrl() + "/taskmanagers");
      if (response.ok()) {
        for (JsonNode tm : response.body.path("taskmanagers")) {
          if (tm.path("slotsNumber").asInt(0) > 0) {
            ids.add(tm.path("id").asText());
          }
        }
      }
    } catch (IOException e) {
      // not up yet
    }
    return ids;
  }

  // ---------------------------------------------------------------- logs

  /** The last {@code lines} lines of every log and stdout file, for failure reports. */
  public String logTails(int lines) {
    StringBuilder text = new StringBuilder();
    if (!Files.isDirectory(logDir())) {
      return "(no log dir)";
    }
    try (Stream<Path> files = Files.list(logDir())) {
      for (Path file : files.sorted().collect(Collectors.toList())) {
        List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
        text.append("===== ")
            .append(file)
            .append(" (last ")
            .append(Math.min(lines, all.size()))
            .append(" of ")
            .append(all.size())
            .append(" lines) =====\n");
        for (String line : all.subList(Math.max(0, all.size() - lines), all.size())) {
          text.append(line).append('\n');
        }
      }
    } catch (IOException e) {
      text.append("(cannot read logs: ").append(e).append(")\n");
    }
    return text.toString();
  }

  /** Every line of the cluster's logs that contains {@code text}, in file order. */
  public List<String> logLinesContaining(String text) {
    List<String> found = new ArrayList<>();
    if (!Files.isDirectory(logDir())) {
      return found;
    }
    try (Stream<Path> files = Files.list(logDir())) {
      for (Path file : files.sorted().collect(Collectors.toList())) {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          if (line.contains(text)) {
            found.add(line);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the logs in " + logDir(), e);
    }
    return found;
  }

  private String failureText(String what) {
    return what + "\nprocesses: " + processes + "\n" + logTails(60);
  }

  // ---------------------------------------------------------------- internals

  private void prepareHome() throws IOException {
    if (Files.exists(home)) {
      try (Stream<Path> walk = Files.walk(home)) {
        for (Path p : walk.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
          Files.delete(p);
        }
      }
    }
    for (String dir : Arrays.asList("conf", "lib", "opt", "log", "tmp", "plugins")) {
      Files.createDirectories(home.resolve(dir));
    }
    for (Path jar : distribution.libJars()) {
      if (keepDistLibJar.test(jar)) {
        link(jar, libDir());
      }
    }
    for (Path jar : extraLibJars) {
      link(jar, libDir());
    }
    for (Path jar : distribution.optJars()) {
      link(jar, home.resolve("opt"));
    }
    for (Map.Entry<String, List<Path>> plugin : plugins.entrySet()) {
      Path dir = Files.createDirectories(pluginsDir().resolve(plugin.getKey()));
      for (Path jar : plugin.getValue()) {
        link(jar, dir);
      }
    }
  }

  private static void link(Path jar, Path dir) throws IOException {
    Path target = dir.resolve(jar.getFileName());
    try {
      Files.createSymbolicLink(target, jar);
    } catch (IOException | UnsupportedOperationException e) {
      Files.copy(jar, target);
    }
  }

  private void writeConfig(int rpcPort) throws IOException {
    Map<String, String> config = new LinkedHashMap<>(extraConfig);
    config.put("jobmanager.rpc.address", LOOPBACK);
    config.put("jobmanager.rpc.port", String.valueOf(rpcPort));
    config.put("jobmanager.bind-host", LOOPBACK);
    config.put("taskmanager.bind-host", LOOPBACK);
    config.put("taskmanager.host", LOOPBACK);
    config.put("rest.address", LOOPBACK);
    config.put("rest.bind-address", LOOPBACK);
    config.put("rest.port", String.valueOf(restPort));
    config.putIfAbsent("cluster.registration.error-delay", "1000");
    config.putIfAbsent("io.tmp.dirs", home.resolve("tmp").toString());
    config.putIfAbsent("web.tmpdir", home.resolve("tmp").resolve("web").toString());
    config.putIfAbsent("blob.storage.directory", home.resolve("tmp").resolve("blob").toString());
    // For the SQL Gateway: submit to this cluster.
    config.putIfAbsent("execution.target", "remote");
    StringBuilder text = new StringBuilder("# Written by the Cobble cluster harness.\n");
    for (Map.Entry<String, String> e : config.entrySet()) {
      text.append(e.getKey()).append(": ").append(yamlValue(e.getValue())).append('\n');
    }
    Files.write(
        confDir().resolve(distribution.configFileName()),
        text.toString().getBytes(StandardCharsets.UTF_8));
  }

  private String yamlValue(String value) {
    if (distribution.usesLegacyConfigFile()) {
      return value; // flink-conf.yaml: everything after ": " is the value, no quoting
    }
    if (value.matches("[A-Za-z0-9_./;,=+@-][A-Za-z0-9_./;,=+@:\\- ]*") && !value.contains(": ")) {
      return value;
    }
    return "'" + value.replace("'", "''") + "'";
  }

  private void writeLog4j() throws IOException {
    String text =
        String.join(
            "\n",
            "monitorInterval = 0",
            "rootLogger.level = INFO",
            "rootLogger.appenderRef.file.ref = MainAppender",
            "logger.pekko.name = org.apache.pekko",
            "logger.pekko.level = WARN",
            "logger.akka.name = akka",
            "logger.akka.level = WARN",
            "logger.netty.name = org.jboss.netty.channel.DefaultChannelPipeline",
            "logger.netty.level = ERROR",
            "logger.shaded_zookeeper.name = org.apache.flink.shaded.zookeeper3",
            "logger.shaded_zookeeper.level = WARN",
            "appender.main.name = MainAppender",
            "appender.main.type = File",
            "appender.main.append = true",
            "appender.main.fileName = ${sys:log.file}",
            "appender.main.layout.type = PatternLayout",
            "appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n",
            "");
    Files.write(confDir().resolve("log4j.properties"), text.getBytes(StandardCharsets.UTF_8));
  }

  private String classpath(boolean withOpt) {
    List<Path> jars = new ArrayList<>();
    try (Stream<Path> lib = Files.list(libDir())) {
      lib.filter(p -> p.toString().endsWith(".jar")).sorted().forEach(jars::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (withOpt) {
      try (Stream<Path> opt = Files.list(home.resolve("opt"))) {
        opt.filter(p -> p.toString().endsWith(".jar")).sorted().forEach(jars::add);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return jars.stream().map(Path::toString).collect(Collectors.joining(":"));
  }

  private Map<String, String> environment() {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("FLINK_HOME", home.toString());
    env.put("FLINK_CONF_DIR", confDir().toString());
    env.put("FLINK_LIB_DIR", libDir().toString());
    env.put("FLINK_OPT_DIR", home.resolve("opt").toString());
    env.put("FLINK_PLUGINS_DIR", pluginsDir().toString());
    env.put("FLINK_LOG_DIR", logDir().toString());
    return env;
  }

  private List<String> javaCommand(String logName, List<String> jvmParams, boolean withOpt) {
    List<String> command = new ArrayList<>();
    command.add(javaBin);
    command.addAll(jvmParams);
    command.addAll(JDK17_MODULE_FLAGS);
    command.add("-Dlog.file=" + logDir().resolve(logName + ".log"));
    command.add("-Dlog4j.configuration=file:" + confDir().resolve("log4j.properties"));
    command.add("-Dlog4j.configurationFile=file:" + confDir().resolve("log4j.properties"));
    command.add("-classpath");
    command.add(classpath(withOpt));
    return command;
  }

  private ManagedProcess launch(
      String name, List<String> jvmParams, String mainClass, List<String> args, boolean withOpt) {
    List<String> command = javaCommand(name, jvmParams, withOpt);
    command.add(mainClass);
    command.addAll(args);
    ManagedProcess process =
        ManagedProcess.start(
            name,
            command,
            environment(),
            home,
            logDir().resolve(name + ".out"),
            logDir().resolve(name + ".log"));
    processes.add(process);
    return process;
  }

  private static final class ResourceParams {
    final List<String> jvmParams;
    final List<String> dynamicArgs;

    ResourceParams(List<String> jvmParams, List<String> dynamicArgs) {
      this.jvmParams = jvmParams;
      this.dynamicArgs = dynamicArgs;
    }
  }

  /** Runs Flink's BashJavaUtils as the start scripts do and parses its last two result lines. */
  private ResourceParams resourceParams(String command) throws IOException {
    String name = "bash-java-utils-" + command.toLowerCase(java.util.Locale.ROOT);
    List<String> cmd = javaCommand(name, Arrays.asList("-Xmx256m"), false);
    cmd.add("org.apache.flink.runtime.util.bash.BashJavaUtils");
    cmd.add(command);
    cmd.add("--configDir");
    cmd.add(confDir().toString());
    Path out = logDir().resolve(name + ".out");
    ProcessBuilder builder =
        new ProcessBuilder(cmd).directory(home.toFile()).redirectErrorStream(true);
    builder.environment().putAll(environment());
    builder.redirectOutput(out.toFile());
    Process process = builder.start();
    process.getOutputStream().close();
    try {
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        throw new IllegalStateException("BashJavaUtils " + command + " did not end within 60 s");
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
    List<String> results =
        Files.readAllLines(out, StandardCharsets.UTF_8).stream()
            .filter(l -> l.startsWith(EXEC_RESULT_PREFIX))
            .map(l -> l.substring(EXEC_RESULT_PREFIX.length()).trim())
            .collect(Collectors.toList());
    if (process.exitValue() != 0 || results.size() < 2) {
      throw new IllegalStateException(
          "BashJavaUtils "
              + command
              + " failed (exit "
              + process.exitValue()
              + "):\n"
              + String.join("\n", Files.readAllLines(out, StandardCharsets.UTF_8)));
    }
    List<String> jvm = split(results.get(results.size() - 2));
    List<String> dynamic = split(results.get(results.size() - 1));
    return new ResourceParams(jvm, dynamic);
  }

  private static List<String> split(String line) {
    return Arrays.stream(line.trim().split("\\s+"))
        .filter(s -> !s.isEmpty())
        .collect(Collectors.toList());
  }

  private boolean restOk(String path) {
    try {
      return rest.get(restUrl() + path).ok();
    } catch (IOException e) {
      return false;
    }
  }

  /** Polls {@code condition} until true; fails early when {@code process} died. */
  private void waitUntil(
      String what, Duration timeout, BooleanSupplier condition, ManagedProcess process) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (condition.getAsBoolean()) {
        return;
      }
      if (process != null && !process.isAlive()) {
        throw new IllegalStateException(
            failureText("waiting for " + what + ": " + process + " died"));
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            failureText("waiting for " + what + ": no success within " + timeout));
      }
      try {
        Thread.sleep(250);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for " + what, e);
      }
    }
  }

  /**
   * Distinct ports free now, for JVMs that bind them seconds later. They are taken below the
   * kernel's ephemeral range when it can be read: a port the kernel hands out for a bind to port 0
   * or for an outgoing connection (the cluster's JVMs open many while it starts) could otherwise
   * take one first, and the JobManager or SQL Gateway would fail with "Address already in use".
   */
  static int[] freePorts(int count) throws IOException {
    int[] ports = new int[count];
    int ephemeralStart = ephemeralRangeStart();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int i = 0; i < count; i++) {
      int port = 0;
      for (int attempt = 0; attempt < 100 && port == 0 && ephemeralStart > 11_000; attempt++) {
        int candidate = random.nextInt(10_000, ephemeralStart);
        if (!contains(ports, candidate) && bindable(candidate)) {
          port = candidate;
        }
      }
      while (port == 0 || contains(ports, port)) {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
          socket.setReuseAddress(true);
          port = socket.getLocalPort();
        }
      }
      ports[i] = port;
    }
    return ports;
  }

  private static boolean contains(int[] ports, int port) {
    return Arrays.stream(ports).anyMatch(p -> p == port);
  }

  private static boolean bindable(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(InetAddress.getByName(LOOPBACK), port), 1);
      return true;
    } catch (IOException taken) {
      return false;
    }
  }

  /** The first port of Linux's ephemeral range, or -1 where it cannot be read. */
  private static int ephemeralRangeStart() {
    try {
      // Line by line: a whole-file read of this procfs file returns only its first byte.
      String range = Files.readAllLines(Paths.get("/proc/sys/net/ipv4/ip_local_port_range")).get(0);
      return Integer.parseInt(range.trim().split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }
}
