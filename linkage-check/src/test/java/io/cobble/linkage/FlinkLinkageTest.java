package io.cobble.linkage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.flink.shim.FlinkLine;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The version-neutrality check of the build: every Flink module against every minor it serves. One
 * test per module; each prints its per-minor counts and fails listing every unresolved link. Which
 * minors a line module serves comes from {@link FlinkLine}, the same claim its dist jar makes at
 * runtime.
 */
class FlinkLinkageTest {
  /** Every supported minor, oldest first: each module is compiled against the first it serves. */
  static final List<String> SUPPORTED =
      List.of("1.17.2", "1.18.1", "1.19.3", "1.20.3", "2.0.0", "2.1.1", "2.2.0", "2.3.0");

  private static final List<String> LINE_MODULE_DEPENDENCIES =
      List.of("cobble-flink-api", "shims", "cobble");

  /**
   * The 2.0 line's state backend classes that Line20Shim loads on Flink 2.0 only; from 2.1 it loads
   * those of cobble-flink-2.1-adapter instead.
   */
  private static final Predicate<String> ONLY_ON_2_0 =
      name -> name.startsWith("io/cobble/flink/v2_0/Cobble");

  @TestFactory
  Stream<DynamicTest> everyModuleLinksOnEveryMinorItServes() {
    Stream<DynamicTest> neutral =
        Stream.of(
            check("shims", List.of(), SUPPORTED, name -> true),
            check("cobble-flink-api", List.of("shims", "cobble"), SUPPORTED, name -> true));
    Stream<DynamicTest> lines =
        FlinkLine.all().stream()
            .map(
                line ->
                    check(
                        "cobble-flink-" + line.lineName(),
                        LINE_MODULE_DEPENDENCIES,
                        SUPPORTED.stream().filter(line::serves).collect(Collectors.toList()),
                        line == FlinkLine.LINE_2_0 ? ONLY_ON_2_0.negate() : name -> true));
    Stream<DynamicTest> minorSpecific =
        Stream.of(
            check("cobble-flink-2.0", LINE_MODULE_DEPENDENCIES, List.of("2.0.0"), ONLY_ON_2_0),
            check(
                "cobble-flink-2.1-adapter",
                LINE_MODULE_DEPENDENCIES,
                List.of("2.1.1", "2.2.0", "2.3.0"),
                name -> true));
    return Stream.concat(Stream.concat(neutral, lines), minorSpecific);
  }

  @Test
  void everySupportedMinorIsServedByExactlyOneLine() {
    for (String minor : SUPPORTED) {
      assertEquals(
          1,
          FlinkLine.all().stream().filter(line -> line.serves(minor)).count(),
          "Flink " + minor + " must be served by exactly one line");
    }
  }

  private static DynamicTest check(
      String module, List<String> dependencies, List<String> minors, Predicate<String> classes) {
    return DynamicTest.dynamicTest(
        module + " on " + String.join(", ", minors),
        () -> {
          assertFalse(minors.isEmpty(), module + " serves no supported minor");
          Path flinkRoot = Paths.get(property("linkage.flink.dir"));
          List<LinkageReport> reports =
              new LinkageChecker(
                      module,
                      modulePath(module),
                      dependencies.stream()
                          .map(FlinkLinkageTest::modulePath)
                          .collect(Collectors.toList()),
                      classes)
                  .check(
                      minors.stream()
                          .map(minor -> FlinkMinor.copiedInto(flinkRoot, minor))
                          .collect(Collectors.toList()));
          reports.forEach(report -> System.out.println(report.format()));
          assertTrue(
              reports.stream().allMatch(r -> r.referencesChecked() > 0),
              module + " has no Flink references at all: is the right jar under check?");
          String problems =
              reports.stream()
                  .flatMap(r -> r.problems().stream())
                  .map(LinkageProblem::toString)
                  .collect(Collectors.joining(System.lineSeparator()));
          assertTrue(
              problems.isEmpty(),
              "Flink linkage broken (see linkage-check in README):"
                  + System.lineSeparator()
                  + problems);
        });
  }

  private static Path modulePath(String module) {
    return Paths.get(property("linkage.module." + module));
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    if (value == null || value.startsWith("${")) {
      throw new IllegalStateException(
          name + " is not set: run through Maven (mvn -pl linkage-check verify)");
    }
    return value;
  }
}
