package io.cobble.linkage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Checks one of our modules against every Flink minor it claims to serve: each reference its
 * classes make into Flink must resolve, with the same kind, staticness and access, on each minor.
 */
final class LinkageChecker {
  private final String module;
  private final Path moduleLocation;
  private final List<Path> projectLocations = new ArrayList<>();

  private final java.util.function.Predicate<String> checked;

  /**
   * @param moduleLocation the module's jar or class directory; only its classes are checked
   * @param dependencies our other jars it runs with, so that members inherited through them resolve
   */
  LinkageChecker(String module, Path moduleLocation, List<Path> dependencies) {
    this(module, moduleLocation, dependencies, name -> true);
  }

  /**
   * @param checked which of the module's classes (internal names) to check: a line may carry
   *     classes that its shim loads on some of its minors only
   */
  LinkageChecker(
      String module,
      Path moduleLocation,
      List<Path> dependencies,
      java.util.function.Predicate<String> checked) {
    this.checked = checked;
    this.module = module;
    this.moduleLocation = moduleLocation;
    projectLocations.add(moduleLocation);
    projectLocations.addAll(dependencies);
  }

  /**
   * @param minors the minors the module serves; the first is the one it is compiled against, where
   *     its overrides of Flink methods are taken from
   */
  List<LinkageReport> check(List<FlinkMinor> minors) {
    List<String> classNames = new ArrayList<>();
    Set<FlinkReference> references = new TreeSet<>();
    try (ClassFiles classes = ClassFiles.open(moduleLocation)) {
      for (String name : classes.names()) {
        if (!checked.test(name)) {
          continue;
        }
        classNames.add(name);
        references.addAll(ReferenceCollector.collect(classes.read(name)));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<LinkageReport> reports = new ArrayList<>();
    for (FlinkMinor minor : minors) {
      try (ClassPathIndex index = new ClassPathIndex(projectLocations, minor.jars())) {
        ReferenceResolver resolver = new ReferenceResolver(index);
        if (reports.isEmpty()) {
          classNames.forEach(name -> references.addAll(resolver.overrides(index.find(name))));
        }
        Set<FlinkReference> onThisMinor = new TreeSet<>(references);
        classNames.forEach(name -> onThisMinor.addAll(resolver.obligations(index.find(name))));
        reports.add(check(resolver, onThisMinor, minor.version()));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return reports;
  }

  private LinkageReport check(
      ReferenceResolver resolver, Set<FlinkReference> references, String flinkVersion) {
    int checked = 0;
    List<LinkageProblem> problems = new ArrayList<>();
    for (FlinkReference ref : references) {
      ReferenceResolver.Outcome outcome =
          ref.kind() == FlinkReference.Kind.IMPLEMENT
              ? resolver.resolveImplementation(ref)
              : resolver.resolve(ref);
      if (outcome.reachesFlink) {
        checked++;
        if (outcome.problem != null) {
          problems.add(new LinkageProblem(module, ref, outcome.problem, flinkVersion));
        }
      }
    }
    Collections.sort(problems);
    return new LinkageReport(module, flinkVersion, checked, problems);
  }
}
