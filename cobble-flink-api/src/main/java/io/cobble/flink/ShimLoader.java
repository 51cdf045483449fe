package io.cobble.flink;

import io.cobble.CobbleVersion;
import io.cobble.flink.shim.FlinkLine;
import io.cobble.flink.shim.FlinkLineShim;
import io.cobble.flink.shim.RunningFlink;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/**
 * Finds the line shim packaged with this Cobble jar and checks, at first use, that it serves the
 * running Flink. A jar for the wrong line fails here with the name of the jar to use instead,
 * before any line-specific class can fail with a linkage error.
 */
public final class ShimLoader {

  /** The patch number line-specific artifacts append to the Cobble version. */
  static final String LINE_PATCH = "1";

  private static volatile FlinkLineShim current;

  private ShimLoader() {}

  /** The shim for the running Flink; throws {@link IllegalStateException} if it cannot serve. */
  public static FlinkLineShim current() {
    FlinkLineShim shim = current;
    if (shim == null) {
      synchronized (ShimLoader.class) {
        if (current == null) {
          current = select(discover(), RunningFlink.version());
        }
        shim = current;
      }
    }
    return shim;
  }

  static List<FlinkLineShim> discover() {
    List<FlinkLineShim> shims = new ArrayList<>();
    ServiceLoader.load(FlinkLineShim.class, ShimLoader.class.getClassLoader()).forEach(shims::add);
    return shims;
  }

  /** Picks the one shim that serves {@code flinkVersion}, or explains what to install instead. */
  static FlinkLineShim select(List<FlinkLineShim> shims, String flinkVersion) {
    String wanted =
        FlinkLine.serving(flinkVersion)
            .map(line -> line.distJarName(CobbleVersion.get(), LINE_PATCH))
            .orElse(null);
    if (shims.isEmpty()) {
      throw new IllegalStateException(
          "No Cobble Flink line module found on the classpath. "
              + (wanted == null
                  ? unsupported(flinkVersion)
                  : "Put " + wanted + " into $FLINK_HOME/lib."));
    }
    if (shims.size() > 1) {
      throw new IllegalStateException(
          "Several Cobble Flink line modules are on the classpath ("
              + shims.stream().map(s -> s.line().lineName()).collect(Collectors.joining(", "))
              + "); keep only "
              + (wanted == null ? "the one for your Flink version" : wanted)
              + ".");
    }
    FlinkLineShim shim = shims.get(0);
    if (!shim.line().serves(flinkVersion)) {
      throw new IllegalStateException(
          "This Cobble jar ("
              + shim.line().distJarName(CobbleVersion.get(), LINE_PATCH)
              + ") serves "
              + shim.line().servedRange()
              + " but the running Flink is "
              + flinkVersion
              + ". "
              + (wanted == null ? unsupported(flinkVersion) : "Use " + wanted + " instead."));
    }
    return shim;
  }

  private static String unsupported(String flinkVersion) {
    return "Flink "
        + flinkVersion
        + " is not supported by Cobble "
        + CobbleVersion.get()
        + "; supported: "
        + FlinkLine.all().stream().map(FlinkLine::servedRange).collect(Collectors.joining(", "))
        + ".";
  }
}
