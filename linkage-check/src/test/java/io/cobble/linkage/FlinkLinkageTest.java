package io.cobble.linkage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.flink.shim.FlinkLine;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The version-neutrality check of the build: every Flink module against every minor it serves. One
 * test per module; each prints its per-minor counts and fails listing every unresolved link. Which
 * minors a line module serves comes from {@link FlinkLine}, the same claim its dist jar makes at
 * runtime; classes the line loads on only some of them are checked there alone, as declared in
 * {@code linkage-minor-scopes.txt}.
 */
class FlinkLinkageTest {
  /** Every supported minor, oldest first: each module is compiled against the first it serves. */
  static final List<String> SUPPORTED =
      List.of("1.17.2", "1.18.1", "1.19.3", "1.20.3", "2.0.0", "2.1.1", "2.2.0", "2.3.0");

  /** The classes a line's dist jar loads on only some of its minors. */
  static final MinorScopes SCOPES = MinorScopes.fromResource("linkage-minor-scopes.txt");

  private static final List<String> LINE_MODULE_DEPENDENCIES =
      List.of("cobble-flink-api", "shims", "cobble");

  /** The 2.0 line's executor extends the adapter's line-neutral async classes. */
  private static final List<String> LINE_2_0_DEPENDENCIES =
      List.of("cobble-flink-api", "shims", "cobble", "cobble-flink-2.1-adapter");

  @TestFactory
  Stream<DynamicTest> everyModuleLinksOnEveryMinorItServes() {
    Stream<DynamicTest> neutral =
        Stream.of(
            check("shims", List.of(), SUPPORTED),
            check("cobble-flink-api", List.of("shims", "cobble"), SUPPORTED));
    Stream<DynamicTest> lines =
        FlinkLine.all().stream()
            .map(
                line ->
                    check(
                        "cobble-flink-" + line.lineName(),
                        line == FlinkLine.LINE_2_0
                            ? LINE_2_0_DEPENDENCIES
                            : LINE_MODULE_DEPENDENCIES,
                        SUPPORTED.stream().filter(line::serves).collect(Collectors.toList())));
    // Compiled against 2.1.1 and bundled by the 2.0 line: its v2_1 classes load from 2.1 on (see
    // the scopes), its line-neutral async state classes on every minor of the line.
    Stream<DynamicTest> adapters =
        Stream.of(
            check(
                "cobble-flink-2.1-adapter",
                LINE_MODULE_DEPENDENCIES,
                SUPPORTED.stream()
                    .filter(FlinkLine.LINE_2_0::serves)
                    .collect(Collectors.toList())));
    return Stream.concat(Stream.concat(neutral, lines), adapters);
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

  private static DynamicTest check(String module, List<String> dependencies, List<String> minors) {
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
                          .collect(Collectors.toList()))
                  .check(
                      minors.stream()
                          .map(minor -> FlinkMinor.copiedInto(flinkRoot, minor))
                          .collect(Collectors.toList()),
                      SCOPES);
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
