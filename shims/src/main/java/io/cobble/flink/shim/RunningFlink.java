package io.cobble.flink.shim;

import org.apache.flink.runtime.util.EnvironmentInformation;

/** The Flink version this JVM runs, as Flink reports it. */
public final class RunningFlink {

  private RunningFlink() {}

  public static String version() {
    return EnvironmentInformation.getVersion();
  }
}
