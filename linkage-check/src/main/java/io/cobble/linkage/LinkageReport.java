package io.cobble.linkage;

import java.util.Collections;
import java.util.List;

/** The outcome of checking one module against one Flink minor. */
final class LinkageReport {
  private final String module;
  private final String flinkVersion;
  private final int classesChecked;
  private final int referencesChecked;
  private final List<LinkageProblem> problems;

  LinkageReport(
      String module,
      String flinkVersion,
      int classesChecked,
      int referencesChecked,
      List<LinkageProblem> problems) {
    this.module = module;
    this.flinkVersion = flinkVersion;
    this.classesChecked = classesChecked;
    this.referencesChecked = referencesChecked;
    this.problems = Collections.unmodifiableList(problems);
  }

  String flinkVersion() {
    return flinkVersion;
  }

  /** Classes of the module loaded on this minor, hence checked on it. */
  int classesChecked() {
    return classesChecked;
  }

  /** Distinct references (per class of ours) that reach into Flink on this minor. */
  int referencesChecked() {
    return referencesChecked;
  }

  List<LinkageProblem> problems() {
    return problems;
  }

  boolean links() {
    return problems.isEmpty();
  }

  /** A summary line, then one line per problem. */
  String format() {
    StringBuilder out =
        new StringBuilder()
            .append(module)
            .append(" on Flink ")
            .append(flinkVersion)
            .append(": ")
            .append(classesChecked)
            .append(" classes, ")
            .append(referencesChecked)
            .append(" references checked, ")
            .append(problems.size())
            .append(" unresolved");
    for (LinkageProblem problem : problems) {
      out.append(System.lineSeparator()).append("  ").append(problem);
    }
    return out.toString();
  }
}
