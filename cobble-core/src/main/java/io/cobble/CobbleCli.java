package io.cobble;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Entry point of {@code java -jar <cobble or dist jar> <command>}. Each tool registers itself as a
 * subcommand here once it exists.
 */
@Command(
    name = "cobble",
    mixinStandardHelpOptions = true,
    versionProvider = CobbleCli.VersionProvider.class,
    description = "Cobble storage engine tools.",
    subcommands = {CobbleCli.VersionCommand.class, CommandLine.HelpCommand.class})
public final class CobbleCli implements Callable<Integer> {

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the CLI in this JVM and returns its exit code, so tests and embedders avoid exit(). */
  public static int run(String... args) {
    return new CommandLine(new CobbleCli()).execute(args);
  }

  @Override
  public Integer call() {
    new CommandLine(this).usage(System.out);
    return 0;
  }

  @Command(name = "version", description = "Prints the Cobble version.")
  static final class VersionCommand implements Callable<Integer> {
    @Override
    public Integer call() {
      System.out.println("cobble " + CobbleVersion.get());
      return 0;
    }
  }

  static final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"cobble " + CobbleVersion.get()};
    }
  }
}
