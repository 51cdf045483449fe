package io.cobble.flink.shim;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * A Flink line: the set of Flink minor versions one Cobble dist jar serves. A line module is
 * compiled against the first minor of its line.
 */
public enum FlinkLine {
  LINE_1_17("1.17", 1, 17, 1, 18),
  LINE_1_19("1.19", 1, 19, 1, 20),
  /** 2.0 serves every later 2.x minor until a signature change forces a new line. */
  LINE_2_0("2.0", 2, 0, 2, Integer.MAX_VALUE);

  private final String name;
  private final int major;
  private final int firstMinor;
  private final int lastMajor;
  private final int lastMinor;

  FlinkLine(String name, int major, int firstMinor, int lastMajor, int lastMinor) {
    this.name = name;
    this.major = major;
    this.firstMinor = firstMinor;
    this.lastMajor = lastMajor;
    this.lastMinor = lastMinor;
  }

  /** The line name used in artifact versions, e.g. {@code 1.19}. */
  public String lineName() {
    return name;
  }

  /** Whether a Flink version string such as {@code 1.20.3} or {@code 2.1-SNAPSHOT} is served. */
  public boolean serves(String flinkVersion) {
    int[] minor = parseMinor(flinkVersion);
    return compare(minor, major, firstMinor) >= 0 && compare(minor, lastMajor, lastMinor) <= 0;
  }

  /** A human description of the served minors, e.g. {@code Flink 1.19 and 1.20}. */
  public String servedRange() {
    return lastMinor == Integer.MAX_VALUE
        ? "Flink " + name + " and later"
        : "Flink " + name + " and " + lastMajor + "." + lastMinor;
  }

  /** The file name of this line's runtime jar for a Cobble release and line patch. */
  public String distJarName(String cobbleVersion, String linePatch) {
    return "cobble-flink-dist-" + cobbleVersion + "-" + linePatch + "-flink-" + name + ".jar";
  }

  public static Optional<FlinkLine> serving(String flinkVersion) {
    return Arrays.stream(values()).filter(line -> line.serves(flinkVersion)).findFirst();
  }

  public static List<FlinkLine> all() {
    return Arrays.asList(values());
  }

  /** Returns {major, minor} of a version string; rejects strings that are not versions. */
  static int[] parseMinor(String flinkVersion) {
    String[] parts = flinkVersion == null ? new String[0] : flinkVersion.split("[.-]");
    if (parts.length < 2) {
      throw new IllegalArgumentException("Not a Flink version: '" + flinkVersion + "'");
    }
    try {
      return new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1])};
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("Not a Flink version: '" + flinkVersion + "'", e);
    }
  }

  private static int compare(int[] version, int otherMajor, int otherMinor) {
    return version[0] != otherMajor
        ? Integer.compare(version[0], otherMajor)
        : Integer.compare(version[1], otherMinor);
  }
}
