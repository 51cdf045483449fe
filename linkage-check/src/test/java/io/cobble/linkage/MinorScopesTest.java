package io.cobble.linkage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Minor-specific classes inside a line: each is checked on exactly the minors its dist jar loads it
 * on, and still fails there when it misses something. Facts from the 2.x jars the build copies:
 * {@code SizeTrackingStateConfig} arrives in 2.1, {@code
 * KeyedStateBackend#getBackendTypeIdentifier} in 2.2, and the {@code AbstractKeyedStateBackend}
 * constructor without it exists on 2.0 only.
 */
class MinorScopesTest {
  private static final List<String> LINE_2_0 = List.of("2.0.0", "2.1.1", "2.2.0", "2.3.0");
  private static final String OBJECT = "java/lang/Object";
  private static final String CONFIGURATION = "org/apache/flink/configuration/Configuration";
  private static final String SIZE_TRACKING =
      "org/apache/flink/runtime/state/metrics/SizeTrackingStateConfig";
  private static final String KEYED_STATE_BACKEND =
      "org/apache/flink/runtime/state/KeyedStateBackend";
  private static final String ABSTRACT_KEYED_BACKEND =
      "org/apache/flink/runtime/state/AbstractKeyedStateBackend";
  private static final String BACKEND_CONSTRUCTOR_20 =
      "(Lorg/apache/flink/runtime/query/TaskKvStateRegistry;"
          + "Lorg/apache/flink/api/common/typeutils/TypeSerializer;"
          + "Ljava/lang/ClassLoader;"
          + "Lorg/apache/flink/api/common/ExecutionConfig;"
          + "Lorg/apache/flink/runtime/state/ttl/TtlTimeProvider;"
          + "Lorg/apache/flink/runtime/state/metrics/LatencyTrackingStateConfig;"
          + "Lorg/apache/flink/core/fs/CloseableRegistry;"
          + "Lorg/apache/flink/runtime/state/InternalKeyContext;)V";

  @TempDir Path root;

  @Test
  void anAdapterFor21AndLaterIsCheckedOnlyWhereTheShimLoadsIt() {
    FixtureModule module = shimAndAdapter();

    Map<String, List<String>> unscoped = problemsByMinor(module, MinorScopes.none());
    assertFalse(unscoped.get("2.0.0").isEmpty(), "the adapter does not link on 2.0.0");
    assertTrue(
        unscoped.get("2.0.0").stream()
            .allMatch(p -> p.startsWith("fixture: io/cobble/flink/v2_1/SizeTracking -> ")),
        unscoped.toString());
    for (String minor : List.of("2.1.1", "2.2.0", "2.3.0")) {
      assertEquals(List.of(), unscoped.get(minor), minor);
    }

    MinorScopes scopes = scopes("fixture io.cobble.flink.v2_1 2.1+");
    List<LinkageReport> reports = check(module, scopes);
    for (LinkageReport report : reports) {
      assertEquals(List.of(), report.problems(), report.format());
      assertEquals(report.flinkVersion().equals("2.0.0") ? 1 : 2, report.classesChecked());
    }
  }

  @Test
  void aScopedClassMissingAMethodOnOneOfItsMinorsFailsThere() {
    // Calls getBackendTypeIdentifier(), which 2.2 added: broken on 2.1.1, its first minor.
    FixtureModule module =
        shimAndAdapter()
            .define(
                "io/cobble/flink/v2_1/TypeIdentifier",
                Opcodes.ACC_PUBLIC,
                OBJECT,
                null,
                cw ->
                    FixtureModule.staticMethod(
                        cw,
                        "identifier",
                        "(L" + KEYED_STATE_BACKEND + ";)Ljava/lang/String;",
                        mv -> {
                          mv.visitVarInsn(Opcodes.ALOAD, 0);
                          mv.visitMethodInsn(
                              Opcodes.INVOKEINTERFACE,
                              KEYED_STATE_BACKEND,
                              "getBackendTypeIdentifier",
                              "()Ljava/lang/String;",
                              true);
                          mv.visitInsn(Opcodes.ARETURN);
                        }));

    Map<String, List<String>> problems =
        problemsByMinor(module, scopes("fixture io.cobble.flink.v2_1 2.1+"));

    assertEquals(List.of(), problems.get("2.0.0"));
    assertEquals(
        List.of(
            "fixture: io/cobble/flink/v2_1/TypeIdentifier -> "
                + KEYED_STATE_BACKEND
                + "#getBackendTypeIdentifier()Ljava/lang/String; missing on Flink 2.1.1"),
        problems.get("2.1.1"));
    assertEquals(List.of(), problems.get("2.2.0"));
    assertEquals(List.of(), problems.get("2.3.0"));
  }

  @Test
  void aClassDeclarationNarrowsItsPackage() {
    // A 2.0-only keyed-backend base next to the shim, which must still link everywhere.
    FixtureModule module =
        shimAndAdapter()
            .define(
                "io/cobble/flink/v2_0/KeyedBackendBase20",
                Opcodes.ACC_PUBLIC | Opcodes.ACC_ABSTRACT,
                ABSTRACT_KEYED_BACKEND,
                null,
                MinorScopesTest::superConstructor20);
    String scoped =
        "fixture io.cobble.flink.v2_1 2.1+\n"
            + "fixture io.cobble.flink.v2_0.KeyedBackendBase20 2.0";

    Map<String, List<String>> problems = problemsByMinor(module, scopes(scoped));
    problems.forEach((minor, list) -> assertEquals(List.of(), list, minor));
    List<LinkageReport> reports = check(module, scopes(scoped));
    assertEquals(
        List.of(2, 2, 2, 2),
        reports.stream().map(LinkageReport::classesChecked).collect(Collectors.toList()));

    Map<String, List<String>> packageOnly =
        problemsByMinor(module, scopes("fixture io.cobble.flink.v2_1 2.1+"));
    assertEquals(List.of(), packageOnly.get("2.0.0"));
    for (String minor : List.of("2.1.1", "2.2.0", "2.3.0")) {
      assertEquals(
          List.of(
              "fixture: io/cobble/flink/v2_0/KeyedBackendBase20 -> "
                  + ABSTRACT_KEYED_BACKEND
                  + "#<init>"
                  + BACKEND_CONSTRUCTOR_20
                  + " missing on Flink "
                  + minor),
          packageOnly.get(minor),
          minor);
    }
  }

  @Test
  void declarationsAreValidated() {
    assertEquals(
        "minor scope 'm io.x': expected <module> <package-or-class> <minor>...",
        assertThrows(IllegalArgumentException.class, () -> scopes("m io.x")).getMessage());
    assertEquals(
        "minor scope 'm io.x 2.x': '2.x' is not a minor like 2.1 or 2.1+",
        assertThrows(IllegalArgumentException.class, () -> scopes("m io.x 2.x")).getMessage());
    assertEquals(
        "minor scope for io.x in m is declared twice",
        assertThrows(IllegalArgumentException.class, () -> scopes("m io.x 2.1\nm io.x 2.2"))
            .getMessage());
    List<FlinkMinor> line = minors(LINE_2_0);
    IllegalArgumentException nowhere =
        assertThrows(
            IllegalArgumentException.class,
            () -> scopes("m io.x 1.19").minorsOf("m", "io/x/A", line));
    assertEquals(
        "m: io/x/A is declared for Flink [1.19] but the module serves none of them",
        nowhere.getMessage());
    MinorScopes scopes = scopes("m io.x 2.2+ # comment\n# only a comment");
    assertEquals(line.subList(2, 4), scopes.minorsOf("m", "io/x/A", line));
    assertEquals(line.subList(2, 4), scopes.minorsOf("m", "io/x/A$Inner", line));
    assertEquals(line, scopes.minorsOf("m", "io/xy/A", line));
    assertEquals(line, scopes.minorsOf("other", "io/x/A", line));
  }

  @Test
  void theBuildsDeclarationsNameOnlyLineModules() {
    for (String module : FlinkLinkageTest.SCOPES.modules()) {
      // A line module, or an adapter module a line bundles (cobble-flink-2.1-adapter).
      assertTrue(module.matches("cobble-flink-\\d+\\.\\d+(-adapter)?"), module);
    }
  }

  /** A shim that links on every 2.x minor and an adapter that needs 2.1. */
  private FixtureModule shimAndAdapter() {
    return new FixtureModule(root)
        .define(
            "io/cobble/flink/v2_0/Shim",
            Opcodes.ACC_PUBLIC,
            OBJECT,
            null,
            cw ->
                FixtureModule.staticMethod(
                    cw,
                    "config",
                    "()Ljava/lang/Object;",
                    mv -> {
                      mv.visitTypeInsn(Opcodes.NEW, CONFIGURATION);
                      mv.visitInsn(Opcodes.DUP);
                      mv.visitMethodInsn(
                          Opcodes.INVOKESPECIAL, CONFIGURATION, "<init>", "()V", false);
                      mv.visitInsn(Opcodes.ARETURN);
                    }))
        .define(
            "io/cobble/flink/v2_1/SizeTracking",
            Opcodes.ACC_PUBLIC,
            OBJECT,
            null,
            cw ->
                FixtureModule.staticMethod(
                    cw,
                    "disabled",
                    "()Ljava/lang/Object;",
                    mv -> {
                      mv.visitMethodInsn(
                          Opcodes.INVOKESTATIC,
                          SIZE_TRACKING,
                          "disabled",
                          "()L" + SIZE_TRACKING + ";",
                          false);
                      mv.visitInsn(Opcodes.ARETURN);
                    }));
  }

  private static void superConstructor20(ClassWriter cw) {
    MethodVisitor mv =
        cw.visitMethod(Opcodes.ACC_PUBLIC, "<init>", BACKEND_CONSTRUCTOR_20, null, null);
    mv.visitCode();
    for (int i = 0; i <= 8; i++) {
      mv.visitVarInsn(Opcodes.ALOAD, i);
    }
    mv.visitMethodInsn(
        Opcodes.INVOKESPECIAL, ABSTRACT_KEYED_BACKEND, "<init>", BACKEND_CONSTRUCTOR_20, false);
    mv.visitInsn(Opcodes.RETURN);
    mv.visitMaxs(0, 0);
    mv.visitEnd();
  }

  private static MinorScopes scopes(String text) {
    return MinorScopes.parse(List.of(text.split("\n")));
  }

  private static List<FlinkMinor> minors(List<String> versions) {
    Path flinkRoot = Paths.get(System.getProperty("linkage.flink.dir"));
    return versions.stream()
        .map(v -> FlinkMinor.copiedInto(flinkRoot, v))
        .collect(Collectors.toList());
  }

  private static List<LinkageReport> check(FixtureModule module, MinorScopes scopes) {
    return new LinkageChecker("fixture", module.root(), List.of()).check(minors(LINE_2_0), scopes);
  }

  private static Map<String, List<String>> problemsByMinor(
      FixtureModule module, MinorScopes scopes) {
    Map<String, List<String>> problems = new TreeMap<>();
    for (LinkageReport report : check(module, scopes)) {
      problems.put(
          report.flinkVersion(),
          report.problems().stream().map(LinkageProblem::toString).collect(Collectors.toList()));
    }
    return problems;
  }
}
