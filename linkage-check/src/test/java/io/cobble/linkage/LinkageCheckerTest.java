package io.cobble.linkage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.objectweb.asm.Opcodes;

/**
 * Injects real incompatibilities between Flink minors (facts checked against the jars the build
 * copies) and asserts the checker reports exactly them, on exactly the minors where they break.
 */
class LinkageCheckerTest {
  private static final String OBJECT = "java/lang/Object";
  private static final String STATE_TTL_CONFIG = "org/apache/flink/api/common/state/StateTtlConfig";
  private static final String RICH_MAP_FUNCTION =
      "org/apache/flink/api/common/functions/RichMapFunction";
  private static final String CONFIGURATION = "org/apache/flink/configuration/Configuration";
  private static final String OPEN_CONTEXT = "org/apache/flink/api/common/functions/OpenContext";
  private static final List<String> ALL = FlinkLinkageTest.SUPPORTED;

  @TempDir Path root;

  @Test
  void ttlGetterReturningFlinkTimeIsMissingFrom20On() {
    // StateTtlConfig#getTtl() returned org.apache.flink.api.common.time.Time; 2.0 removed both.
    FixtureModule module =
        new FixtureModule(root)
            .define(
                "io/cobble/fixture/UsesTtlTime",
                Opcodes.ACC_PUBLIC,
                OBJECT,
                null,
                cw ->
                    FixtureModule.staticMethod(
                        cw,
                        "ttl",
                        "(L" + STATE_TTL_CONFIG + ";)Ljava/lang/Object;",
                        mv -> {
                          mv.visitVarInsn(Opcodes.ALOAD, 0);
                          mv.visitMethodInsn(
                              Opcodes.INVOKEVIRTUAL,
                              STATE_TTL_CONFIG,
                              "getTtl",
                              "()Lorg/apache/flink/api/common/time/Time;",
                              false);
                          mv.visitInsn(Opcodes.ARETURN);
                        }));

    Map<String, List<String>> problems = problemsByMinor(module, ALL);

    for (String minor : ALL) {
      List<String> expected =
          minor.startsWith("2.")
              ? List.of(
                  "fixture: io/cobble/fixture/UsesTtlTime -> "
                      + STATE_TTL_CONFIG
                      + "#getTtl()Lorg/apache/flink/api/common/time/Time; missing on Flink "
                      + minor)
              : List.of();
      assertEquals(expected, problems.get(minor), minor);
    }
  }

  @Test
  void implementingTheLegacySourceFunctionBreaksFrom20On() {
    // SourceFunction moved to ...functions.source.legacy in 2.0; the old name is gone.
    String sourceFunction = "org/apache/flink/streaming/api/functions/source/SourceFunction";
    FixtureModule module =
        new FixtureModule(root)
            .define(
                "io/cobble/fixture/LegacySource",
                Opcodes.ACC_PUBLIC | Opcodes.ACC_ABSTRACT,
                OBJECT,
                new String[] {sourceFunction},
                cw -> FixtureModule.constructor(cw, OBJECT));

    Map<String, List<String>> problems = problemsByMinor(module, ALL);

    for (String minor : ALL) {
      List<String> expected =
          minor.startsWith("2.")
              ? List.of(
                  "fixture: io/cobble/fixture/LegacySource -> "
                      + sourceFunction
                      + " missing on Flink "
                      + minor)
              : List.of();
      assertEquals(expected, problems.get(minor), minor);
    }
  }

  @Test
  void openWithConfigurationIsNeitherCallableNorOverriddenFrom20On() {
    // AbstractRichFunction#open(Configuration) became open(OpenContext) in 2.0: the super call
    // stops linking and our override silently stops being called.
    String openWithConfiguration = "open(L" + CONFIGURATION + ";)V";
    FixtureModule module =
        new FixtureModule(root)
            .define(
                "io/cobble/fixture/ConfiguredMapper",
                Opcodes.ACC_PUBLIC | Opcodes.ACC_ABSTRACT,
                RICH_MAP_FUNCTION,
                null,
                cw -> {
                  FixtureModule.constructor(cw, RICH_MAP_FUNCTION);
                  var mv =
                      cw.visitMethod(
                          Opcodes.ACC_PUBLIC, "open", "(L" + CONFIGURATION + ";)V", null, null);
                  mv.visitCode();
                  mv.visitVarInsn(Opcodes.ALOAD, 0);
                  mv.visitVarInsn(Opcodes.ALOAD, 1);
                  mv.visitMethodInsn(
                      Opcodes.INVOKESPECIAL,
                      RICH_MAP_FUNCTION,
                      "open",
                      "(L" + CONFIGURATION + ";)V",
                      false);
                  mv.visitInsn(Opcodes.RETURN);
                  mv.visitMaxs(0, 0);
                  mv.visitEnd();
                });

    Map<String, List<String>> problems = problemsByMinor(module, ALL);

    for (String minor : ALL) {
      List<String> expected =
          minor.startsWith("2.")
              ? List.of(
                  "fixture: io/cobble/fixture/ConfiguredMapper -> "
                      + "org/apache/flink/api/common/functions/AbstractRichFunction#"
                      + openWithConfiguration
                      + " no longer overridden (no Flink supertype declares it) on Flink "
                      + minor,
                  "fixture: io/cobble/fixture/ConfiguredMapper -> "
                      + RICH_MAP_FUNCTION
                      + "#"
                      + openWithConfiguration
                      + " missing on Flink "
                      + minor)
              : List.of();
      assertEquals(expected, problems.get(minor), minor);
    }
  }

  @Test
  void memberInheritedThroughOurOwnClassIsResolvedInItsFlinkSupertypes() {
    // open(OpenContext) arrived in 1.19: a call naming our subclass still links against Flink.
    String mapper = "io/cobble/fixture/Mapper";
    FixtureModule module =
        new FixtureModule(root)
            .define(
                mapper,
                Opcodes.ACC_PUBLIC | Opcodes.ACC_ABSTRACT,
                RICH_MAP_FUNCTION,
                null,
                cw -> FixtureModule.constructor(cw, RICH_MAP_FUNCTION))
            .define(
                "io/cobble/fixture/Opener",
                Opcodes.ACC_PUBLIC,
                OBJECT,
                null,
                cw ->
                    FixtureModule.staticMethod(
                        cw,
                        "open",
                        "(L" + mapper + ";)V",
                        mv -> {
                          mv.visitVarInsn(Opcodes.ALOAD, 0);
                          mv.visitInsn(Opcodes.ACONST_NULL);
                          mv.visitMethodInsn(
                              Opcodes.INVOKEVIRTUAL,
                              mapper,
                              "open",
                              "(L" + OPEN_CONTEXT + ";)V",
                              false);
                          mv.visitInsn(Opcodes.RETURN);
                        }));

    Map<String, List<String>> problems = problemsByMinor(module, ALL);

    for (String minor : ALL) {
      List<String> expected =
          minor.startsWith("1.17") || minor.startsWith("1.18")
              ? List.of(
                  "fixture: io/cobble/fixture/Opener -> "
                      + mapper
                      + "#open(L"
                      + OPEN_CONTEXT
                      + ";)V missing from its Flink supertypes on Flink "
                      + minor)
              : List.of();
      assertEquals(expected, problems.get(minor), minor);
    }
  }

  @Test
  void concreteClassMissingAnAbstractMethodAddedLaterIsReported() {
    // ReadableConfig gained the abstract toMap() in 1.19: a 1.17 implementation no longer is one.
    String readableConfig = "org/apache/flink/configuration/ReadableConfig";
    String configOption = "org/apache/flink/configuration/ConfigOption";
    FixtureModule module =
        new FixtureModule(root)
            .define(
                "io/cobble/fixture/ConfigView",
                Opcodes.ACC_PUBLIC,
                OBJECT,
                new String[] {readableConfig},
                cw -> {
                  FixtureModule.constructor(cw, OBJECT);
                  FixtureModule.stubMethod(
                      cw, "get", "(L" + configOption + ";)Ljava/lang/Object;", Opcodes.ARETURN);
                  FixtureModule.stubMethod(
                      cw,
                      "getOptional",
                      "(L" + configOption + ";)Ljava/util/Optional;",
                      Opcodes.ARETURN);
                });

    Map<String, List<String>> problems = problemsByMinor(module, ALL);

    for (String minor : ALL) {
      List<String> expected =
          minor.startsWith("1.17") || minor.startsWith("1.18")
              ? List.of()
              : List.of(
                  "fixture: io/cobble/fixture/ConfigView -> "
                      + readableConfig
                      + "#toMap()Ljava/util/Map; not implemented on Flink "
                      + minor);
      assertEquals(expected, problems.get(minor), minor);
    }
  }

  @Test
  void staticnessAndAccessAreCheckedNotJustNames() {
    FixtureModule module =
        new FixtureModule(root)
            .define(
                "io/cobble/fixture/Misuses",
                Opcodes.ACC_PUBLIC,
                OBJECT,
                null,
                cw ->
                    FixtureModule.staticMethod(
                        cw,
                        "misuse",
                        "()V",
                        mv -> {
                          // ConfigOption#key() is an instance method.
                          mv.visitMethodInsn(
                              Opcodes.INVOKESTATIC,
                              "org/apache/flink/configuration/ConfigOption",
                              "key",
                              "()Ljava/lang/String;",
                              false);
                          mv.visitInsn(Opcodes.POP);
                          // Configuration#confData is protected; we are no subclass.
                          mv.visitInsn(Opcodes.ACONST_NULL);
                          mv.visitFieldInsn(
                              Opcodes.GETFIELD, CONFIGURATION, "confData", "Ljava/util/HashMap;");
                          mv.visitInsn(Opcodes.POP);
                          mv.visitInsn(Opcodes.RETURN);
                        }));

    Map<String, List<String>> problems = problemsByMinor(module, List.of("1.17.2", "2.3.0"));

    for (String minor : List.of("1.17.2", "2.3.0")) {
      assertEquals(
          List.of(
              "fixture: io/cobble/fixture/Misuses -> "
                  + "org/apache/flink/configuration/ConfigOption#key()Ljava/lang/String;"
                  + " changed: no longer static on Flink "
                  + minor,
              "fixture: io/cobble/fixture/Misuses -> "
                  + CONFIGURATION
                  + "#confData:Ljava/util/HashMap; not accessible (protected) on Flink "
                  + minor),
          problems.get(minor),
          minor);
    }
  }

  @Test
  void countsOnlyReferencesThatReachFlink() {
    FixtureModule module =
        new FixtureModule(root)
            .define(
                "io/cobble/fixture/Plain",
                Opcodes.ACC_PUBLIC,
                OBJECT,
                null,
                cw -> FixtureModule.constructor(cw, OBJECT));

    List<LinkageReport> reports = check(module, List.of("1.17.2"));

    assertEquals(0, reports.get(0).referencesChecked());
    assertTrue(reports.get(0).links());
  }

  private static Map<String, List<String>> problemsByMinor(
      FixtureModule module, List<String> minors) {
    Map<String, List<String>> problems = new TreeMap<>();
    for (LinkageReport report : check(module, minors)) {
      assertTrue(report.referencesChecked() > 0, report.format());
      problems.put(
          report.flinkVersion(),
          report.problems().stream().map(LinkageProblem::toString).collect(Collectors.toList()));
    }
    return problems;
  }

  private static List<LinkageReport> check(FixtureModule module, List<String> minors) {
    Path flinkRoot = Paths.get(System.getProperty("linkage.flink.dir"));
    return new LinkageChecker("fixture", module.root(), List.of())
        .check(
            minors.stream()
                .map(minor -> FlinkMinor.copiedInto(flinkRoot, minor))
                .collect(Collectors.toList()));
  }
}
