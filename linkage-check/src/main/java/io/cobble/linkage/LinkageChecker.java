package io.cobble.linkage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Checks one of our modules against every Flink minor it claims to serve: each reference its
 * classes make into Flink must resolve, with the same kind, staticness and access, on each minor.
 */
final class LinkageChecker {
  private final String module;
  private final Path moduleLocation;
  private final List<Path> projectLocations = new ArrayList<>();

  /**
   * @param moduleLocation the module's jar or class directory; only its classes are checked
   * @param dependencies our other jars it runs with, so that members inherited through them resolve
   */
  LinkageChecker(String module, Path moduleLocation, List<Path> dependencies) {
    this.module = module;
    this.moduleLocation = moduleLocation;
    projectLocations.add(moduleLocation);
    projectLocations.addAll(dependencies);
  }

  /**
   * Checks every class on each minor it is loaded on, as {@code scopes} declares.
   *
   * @param minors the minors the module serves, oldest first; a class's overrides of Flink methods
   *     are taken from the first minor it is loaded on, the one it is compiled against
   */
  List<LinkageReport> check(List<FlinkMinor> minors, MinorScopes scopes) {
    Map<String, Set<FlinkReference>> referencesByClass = new TreeMap<>();
    Map<String, List<FlinkMinor>> minorsByClass = new TreeMap<>();
    try (ClassFiles classes = ClassFiles.open(moduleLocation)) {
      for (String name : classes.names()) {
        referencesByClass.put(name, new TreeSet<>(ReferenceCollector.collect(classes.read(name))));
        minorsByClass.put(name, scopes.minorsOf(module, name, minors));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<LinkageReport> reports = new ArrayList<>();
    for (FlinkMinor minor : minors) {
      try (ClassPathIndex index = new ClassPathIndex(projectLocations, minor.jars())) {
        ReferenceResolver resolver = new ReferenceResolver(index);
        Set<FlinkReference> onThisMinor = new TreeSet<>();
        int classesChecked = 0;
        for (Map.Entry<String, List<FlinkMinor>> entry : minorsByClass.entrySet()) {
          String name = entry.getKey();
          if (!entry.getValue().contains(minor)) {
            continue;
          }
          classesChecked++;
          Set<FlinkReference> references = referencesByClass.get(name);
          if (entry.getValue().get(0) == minor) {
            references.addAll(resolver.overrides(index.find(name)));
          }
          onThisMinor.addAll(references);
          onThisMinor.addAll(resolver.obligations(index.find(name)));
        }
        reports.add(check(resolver, onThisMinor, minor.version(), classesChecked));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return reports;
  }

  /** Checks every class on every minor. */
  List<LinkageReport> check(List<FlinkMinor> minors) {
    return check(minors, MinorScopes.none());
  }

  private LinkageReport check(
      ReferenceResolver resolver,
      Set<FlinkReference> references,
      String flinkVersion,
      int classesChecked) {
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
    return new LinkageReport(module, flinkVersion, classesChecked, checked, problems);
  }
}
