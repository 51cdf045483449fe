package io.cobble;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class CobbleCliTest {

  private static String runCapturing(int expectedExit, String... args) {
    PrintStream original = System.out;
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
    try {
      assertEquals(expectedExit, CobbleCli.run(args));
    } finally {
      System.setOut(original);
    }
    return buffer.toString(StandardCharsets.UTF_8);
  }

  @Test
  void helpListsCommands() {
    String out = runCapturing(0, "--help");
    assertTrue(out.contains("version"), out);
    assertTrue(out.contains("Usage: cobble"), out);
  }

  @Test
  void versionIsTheBuiltVersion() {
    String out = runCapturing(0, "version");
    assertTrue(out.startsWith("cobble " + CobbleVersion.get()), out);
    assertNotEquals("${project.version}", CobbleVersion.get());
  }

  @Test
  void unknownCommandFails() {
    assertNotEquals(0, CobbleCli.run("no-such-command"));
  }
}
